import Dispatch
import Foundation
@_spi(Testing) @_spi(Benchmarks) @_spi(Tuning) import Spindle
import Testing
import SpindleTestSupport

// Effects as data, the hard parts: unhandled effects and handler errors go
// to the error hook, stop discards and cancels, the loops let go of what they ran.

/// The error a failing handler throws.
struct HandlerFailure: Error, Equatable {
    let value: Int
}

/// Effects that test errors and stop: `.fail(n)` throws for odd `n`;
/// `.block` holds its route's queue on the latch; `.wait` waits for
/// cancellation, then tries to emit (the answer is recorded).
struct TroubleRouter {
    let latch = Latch()
    let waiting = Recorder<Bool>()
    let lateAnswers = Recorder<EmitResult>()

    var router: EffectRouter<TaskEffect, TaskEvent> {
        let (latch, waiting, lateAnswers) = (latch, waiting, lateAnswers)
        return workRouter
            .route({ effect -> Int? in if case .fail(let value) = effect { value } else { nil } }) { value async throws in
                if value % 2 == 1 { throw HandlerFailure(value: value) }
                return .done(value)
            }
            .route(where: { $0 == .block }) { _ in
                latch.block()
                return .done(-1)
            }
            .route(where: { $0 == .wait }, emitting: { _, emitter in
                waiting.append(true)
                // Not a sleep for synchronisation: it waits for cancellation.
                try? await Task.sleep(for: .seconds(3_600))
                lateAnswers.append(emitter.emit(.done(-2)))
            })
    }
}

/// `.request(n)` dispatches one of the trouble effects, chosen by the test.
@Sendable func troubleNext(_ effects: @escaping @Sendable (Int) -> [TaskEffect]) -> @Sendable (Tally, TaskEvent) -> Next<Tally, TaskEffect> {
    { state, event in
        if case .request(let value) = event { return .dispatch(effects(value)) }
        return tallyNext(state, event)
    }
}

extension EffectsAsData {
@Suite struct EffectRouterStopTests {
    @Test func anUnhandledEffectIsReportedAndCountedAndTheLoopGoesOn() async throws {
        let errors = Recorder<EffectError>()
        let loop = try Spin(initialState: Tally()) {
            Feedback<Tally, TaskEvent>(effect: { _ in nil })
            Reducer(troubleNext { _ in [.nobodyHandlesThis, .work(1)] }, effects: workRouter)
        }.start(options: SpinOptions(onEffectError: { error in
            // A slow hook: the stop below must still wait for it (the report
            // of an effect dispatched before a stop is made before the stop
            // returns). No correctness rests on the delay; it only makes a
            // stop that did not wait fail this test every time.
            usleep(20_000)
            errors.append(error)
        }))
        loop.emit(.request(0))
        #expect(await eventually { errors.count == 1 && loop.state.done == [1] })
        let error = errors.values.first
        #expect(error?.feedbackIndex == 1, "the router's index: just after the spin's one feedback")
        #expect(error?.router == "EffectRouter<TaskEffect, TaskEvent>", "an unnamed router is named after its types")
        let unhandled = error?.underlying as? UnhandledEffectError
        #expect(unhandled?.effect as? TaskEffect == .nobodyHandlesThis)
        #expect(unhandled?.router == "EffectRouter<TaskEffect, TaskEvent>")
        loop.emit(.request(0))
        #expect(await eventually { loop.state.done == [1, 1] })
        await loop.stop()
        #expect(errors.count == 2, "the second request's unhandled effect is reported before the stop returns")
        let statistics = loop.statistics
        #expect(statistics.unhandledEffects == 2 && statistics.effectErrors == 2)
        #expect(statistics.effectsDispatched == 4 && statistics.effectsHandled == 2)
    }

    @Test func aThrowingAsyncHandlerIsReportedAndTheLoopKeepsRunning() async throws {
        let errors = Recorder<EffectError>()
        let loop = try Spin(initialState: Tally()) {
            Reducer(troubleNext { [.fail($0)] }, effects: TroubleRouter().router)
        }.start(options: SpinOptions(onEffectError: { errors.append($0) }))
        for value in 0..<10 { loop.emit(.request(value)) }
        #expect(await eventually { loop.state.done.count == 5 && errors.count == 5 })
        await loop.stop()
        #expect(Set(loop.state.done) == [0, 2, 4, 6, 8])
        let failures = errors.values.compactMap { $0.underlying as? EffectHandlerError }
        #expect(failures.count == 5)
        #expect(failures.allSatisfy { $0.routeIndex == 1 && $0.effect is TaskEffect })
        #expect(Set(failures.compactMap { ($0.underlying as? HandlerFailure)?.value }) == [1, 3, 5, 7, 9])
        #expect(errors.values.allSatisfy { $0.feedbackIndex == 0 && $0.router == failures.first?.router })
        #expect(loop.statistics.effectErrors == 5)
    }

    @Test func stopDiscardsPendingEffectsCancelsRunningHandlersAndRejectsLateEvents() async throws {
        let trouble = TroubleRouter()
        // Route 2's queue is held by `.block`; the five `.block`s behind it
        // are pending at stop. `.wait` runs until cancelled.
        let loop = try Spin(initialState: Tally()) {
            Reducer(troubleNext { _ in [.wait] + Array(repeating: .block, count: 6) }, effects: trouble.router)
        }.start()
        loop.emit(.request(0))
        #expect(await eventually { trouble.latch.isBlocked && trouble.waiting.count == 1 })
        let returned = Flag()
        let stopping = Task {
            defer { returned.raise() }
            return await loop.stop()
        }
        // The stop discards the pending effects at once, then waits for the
        // blocked sync handler: it returns only once that handler has.
        #expect(await eventually { loop.statistics.effectsDiscardedAtStop == 5 })
        #expect(!returned.isRaised, "stop returned while a handler was still running")
        trouble.latch.release()
        let report = await stopping.value
        #expect(report.reduced == 1)
        let statistics = loop.statistics
        #expect(statistics.effectsDispatched == 7)
        #expect(statistics.effectsHandled == 2)
        #expect(statistics.effectsDiscardedAtStop == 5)
        // The sync handler's event came after the stop began: rejected, and
        // counted before the stop returned.
        #expect(statistics.lateEventsDiscarded >= 1)
        // The running async handler was cancelled; what it emits is rejected.
        #expect(await eventually { trouble.lateAnswers.values == [.stopped] })
        #expect(await eventually { loop.statistics.lateEventsDiscarded == 2 })
        #expect(loop.state.done.isEmpty)
    }

    /// Stop waits for a handler call in progress, and no handler is called
    /// after it returns: each handler checks, as it is called and as its
    /// call ends (an async one's, at its first suspension), that the stop
    /// has not returned yet; the first call takes long enough that a stop
    /// which did not wait for it would return first.
    @Test("no handler is called after stop returns, sync or async", arguments: [false, true])
    func noHandlerIsCalledAfterStopReturns(async: Bool) async throws {
        let lateCalls = Counter()
        for _ in 0..<20 {
            // This round's: a handler of a later round must not lower it.
            let stopReturned = Flag()
            let calls = Counter()
            let router = EffectRouter<TaskEffect, TaskEvent>()
                .route({ effect -> Int? in if case .work(let value) = effect { value } else { nil } }) { value in
                    if stopReturned.isRaised { lateCalls.add() }
                    calls.add()
                    // Long enough for a stop that does not wait to return
                    // first (on the route's queue thread, not a cooperative one).
                    if value == 0 { usleep(50_000) }
                    if stopReturned.isRaised { lateCalls.add() }
                    return nil
                }
                .route({ effect -> Int? in if case .fail(let value) = effect { value } else { nil } }) { value async in
                    if stopReturned.isRaised { lateCalls.add() }
                    calls.add()
                    // Up to its first suspension the call runs on the route's queue.
                    if value == 0 { usleep(50_000) }
                    if stopReturned.isRaised { lateCalls.add() }
                    try? await Task.sleep(for: .seconds(3_600))
                    return nil
                }
            let loop = try Spin(initialState: Tally()) {
                Reducer(troubleNext { value in async ? [.fail(value)] : [.work(value)] }, effects: router)
            }.start()
            for value in 0..<50 { loop.emit(.request(value)) }
            // The stop meets the route with a handler call in progress.
            #expect(await eventually { calls.current > 0 })
            await loop.stop()
            stopReturned.raise()
            // Whatever a drain still had in hand was discarded at the stop.
            let statistics = loop.statistics
            #expect(statistics.effectsDispatched == statistics.effectsHandled + statistics.effectsDiscardedAtStop)
        }
        #expect(lateCalls.current == 0, "\(lateCalls.current) handler calls after stop returned")
    }

    @Test func loopsWithEffectsLetGoOfEverythingTheyRan() async throws {
        // This test's own objects, not the process-wide live counts, which
        // other suites' loops move meanwhile: each closure the loops hold
        // carries a probe, and each waiting handler records its end.
        let probes = ReleaseProbes()
        let trouble = TroubleRouter()
        do {
            let (feedback, reducer, router) = (probes.probe(), probes.probe(), probes.probe())
            let next = troubleNext { [.work($0), .fail($0 * 2), .wait] }
            let spin = Spin(initialState: Tally()) {
                Feedback<Tally, TaskEvent>(effect: { _ in
                    _ = feedback
                    return nil
                })
                Reducer({ state, event in
                    _ = reducer
                    return next(state, event)
                }, effects: trouble.router.route(where: { _ in
                    _ = router
                    return false
                }) { _ in .done(0) })
            }
            for round in 0..<3 {
                let loop = try spin.start(options: SpinOptions(onEffectError: { _ in }))
                loop.emit(.request(round))
                #expect(await eventually { loop.state.done.count == 2 && trouble.waiting.count == round + 1 })
                await loop.stop()
            }
        }
        // Every waiting handler was cancelled and its task body returned.
        #expect(await eventually { trouble.lateAnswers.values == [.stopped, .stopped, .stopped] })
        // The loops and their routers let go of the spin's closures.
        #expect(await eventually { probes.live == 0 }, "\(probes.live) of the loops' closures still held")
    }
}
}
