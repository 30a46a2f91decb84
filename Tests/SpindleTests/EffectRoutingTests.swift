import Dispatch
import Spindle
import Testing
import SpindleTestSupport

// Effects as data, how routes claim effects (issue 13): routes named by an
// enum case or an effect value, the fallback, ambiguous effects, and the
// router's name in its errors. `.nobodyHandlesThis` ends a reduction's
// effects as a sentinel: the errors of one reduction are reported in
// dispatch order, so once its error is in, every error before it is too.

extension EffectsAsData {
@Suite struct EffectRoutingTests {
    @Test func routeCaseTellsApartCasesWhosePayloadsHaveTheSameType() async throws {
        let errors = Recorder<EffectError>()
        // `.work`, `.fail` and `.stream` all carry an Int.
        let router = EffectRouter<TaskEffect, TaskEvent>(name: "tasks")
            .routeCase(TaskEffect.work) { value in .done(value) }
            .routeCase(TaskEffect.fail) { value in .done(-value) }
            .routeEffects(equalTo: .block) { .done(0) }
        let loop = try Spin(initialState: Tally()) {
            Reducer(troubleNext { [.work($0), .stream($0), .fail($0), .block, .nobodyHandlesThis] }, effects: router)
        }.start(options: SpinOptions(onEffectError: { errors.append($0) }))
        loop.emit(.request(7))
        #expect(await eventually { errors.count == 2 && loop.state.done.count == 3 })
        await loop.stop()
        #expect(Set(loop.state.done) == [7, -7, 0])
        // No route claims `.stream(7)`: not `.work`'s, though its payload is an Int.
        let unhandled = errors.values.compactMap { $0.underlying as? UnhandledEffectError }
        #expect(unhandled.compactMap { $0.effect as? TaskEffect } == [.stream(7), .nobodyHandlesThis])
        #expect(unhandled.allSatisfy { $0.router == "tasks" })
        #expect(errors.values.allSatisfy { $0.router == "tasks" })
        #expect(loop.statistics.effectsHandled == 3 && loop.statistics.unhandledEffects == 2)
    }

    @Test func routeCaseAndRouteEffectsTakeAsyncAndEmittingHandlers() async throws {
        let router = EffectRouter<TaskEffect, TaskEvent>()
            .routeCase(TaskEffect.work) { value async in
                await Task.yield()
                return .done(value)
            }
            .routeCase(TaskEffect.stream, emitting: { count, emitter in
                for value in 0..<count { emitter.emit(.done(100 + value)) }
            })
            .routeEffects(equalTo: .wait) { () async throws -> TaskEvent? in .done(200) }
            .routeEffects(equalTo: .block, emitting: { emitter in
                emitter.emit(.done(300))
                emitter.emit(.done(301))
            })
        let loop = try Spin(initialState: Tally()) {
            Reducer(troubleNext { [.work($0), .stream(3), .wait, .block] }, effects: router)
        }.start()
        loop.emit(.request(1))
        #expect(await eventually { loop.state.done.count == 7 })
        await loop.stop()
        #expect(Set(loop.state.done) == [1, 100, 101, 102, 200, 300, 301])
        #expect(loop.statistics.effectsHandled == 4 && loop.statistics.unhandledEffects == 0)
    }

    @Test func theFallbackTakesOnlyWhatNoOtherRouteClaims() async throws {
        let errors = Recorder<EffectError>()
        let fallen = Recorder<TaskEffect>()
        // Added first, yet offered only the effects the others leave.
        let router = EffectRouter<TaskEffect, TaskEvent>()
            .fallback { effect in
                fallen.append(effect)
                return effect == .nobodyHandlesThis ? .done(99) : nil
            }
            .routeCase(TaskEffect.work) { value in .done(value) }
        let loop = try Spin(initialState: Tally()) {
            Reducer(troubleNext { [.work($0), .record("r"), .nobodyHandlesThis] }, effects: router)
        }.start(options: SpinOptions(onEffectError: { errors.append($0) }))
        loop.emit(.request(4))
        #expect(await eventually { Set(loop.state.done) == [4, 99] })
        await loop.stop()
        #expect(fallen.values == [.record("r"), .nobodyHandlesThis])
        // A catch-all fallback is neither an ambiguity nor leaves anything unhandled.
        #expect(errors.values.isEmpty && loop.statistics.effectErrors == 0)
        #expect(loop.statistics.unhandledEffects == 0 && loop.statistics.effectsHandled == 3)
    }

    @Test func anEffectTwoRoutesClaimIsHandledByTheFirstAndReported() async throws {
        let errors = Recorder<EffectError>()
        let second = Recorder<Int>()
        let router = EffectRouter<TaskEffect, TaskEvent>(name: "overlapping")
            .routeCase(TaskEffect.record) { _ in nil }
            .route(where: { if case .work = $0 { true } else { false } }) { _ in .done(-1) }
            .routeCase(TaskEffect.work) { value in
                second.append(value)
                return .done(value)
            }
        let loop = try Spin(initialState: Tally()) {
            Feedback<Tally, TaskEvent>(effect: { _ in nil })
            Reducer(troubleNext { [.work($0), .nobodyHandlesThis] }, effects: router)
        }.start(options: SpinOptions(onEffectError: { errors.append($0) }))
        loop.emit(.request(5))
        #expect(await eventually { errors.count == 2 && loop.state.done == [-1] })
        await loop.stop()
        let ambiguous = try #require(errors.values.first?.underlying as? AmbiguousEffectRouteError)
        #expect(ambiguous.routes == [1, 2])
        #expect(ambiguous.effect as? TaskEffect == .work(5))
        #expect(ambiguous.router == "overlapping")
        #expect(String(describing: ambiguous)
            == "routes 1, 2 of the effect router \"overlapping\" all match the effect work(5); route 1 handles it")
        // The error names the router; the index is the router's position.
        #expect(errors.values.first?.router == "overlapping")
        #expect(errors.values.first?.feedbackIndex == 1)
        // Handled once, by the first claimant: the second never ran.
        // After stop every dispatched effect is counted once: one handling.
        let statistics = loop.statistics
        #expect(statistics.effectsDispatched == 2 && statistics.unhandledEffects == 1)
        #expect(statistics.effectsHandled + statistics.effectsDiscardedAtStop == 1)
        #expect(loop.state.done == [-1] && second.values.isEmpty)
        #expect(statistics.effectErrors == 2)
    }

    @Test func aRoutersErrorsNameItAndAFeedbacksErrorsNameNoRouter() async throws {
        struct Boom: Error {}
        let errors = Recorder<EffectError>()
        let router = EffectRouter<TaskEffect, TaskEvent>(name: "search")
            .routeCase(TaskEffect.fail) { (_: Int) async throws -> TaskEvent? in throw Boom() }
        let loop = try Spin(initialState: Tally()) {
            Feedback<Tally, TaskEvent>(effect: { (state: Tally) async throws -> TaskEvent? in
                if state.requested == 0 { throw Boom() }
                return nil
            })
            Reducer(troubleNext { [.fail($0)] }, effects: router)
        }.start(options: SpinOptions(onEffectError: { errors.append($0) }))
        loop.emit(.request(1))
        #expect(await eventually { errors.values.contains { $0.router == nil } && errors.values.contains { $0.router != nil } })
        await loop.stop()
        let fromRouter = errors.values.first { $0.router != nil }
        #expect(fromRouter?.router == "search")
        let failure = fromRouter?.underlying as? EffectHandlerError
        #expect(failure?.router == "search" && failure?.routeIndex == 0)
        #expect(failure.map { String(describing: $0).hasPrefix("route 0 of the effect router \"search\" failed") } == true)
        let fromFeedback = errors.values.first { $0.router == nil }
        #expect(fromFeedback?.feedbackIndex == 0 && fromFeedback?.underlying is Boom)
    }

    @Test func anUnnamedRouterIsNamedAfterItsTypes() {
        #expect(EffectRouter<TaskEffect, TaskEvent>().name == "EffectRouter<TaskEffect, TaskEvent>")
        #expect(EffectRouter<TaskEffect, TaskEvent>(name: "x").routeCase(TaskEffect.work) { .done($0) }.name == "x")
        #expect(EffectRouter<TaskEffect, TaskEvent>().fallback { _ in nil }.routeCase(TaskEffect.work) { .done($0) }.count == 2)
    }
}
}
