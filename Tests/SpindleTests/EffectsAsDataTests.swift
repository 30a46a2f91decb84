import Dispatch
@_spi(Testing) @_spi(Benchmarks) @_spi(Tuning) import Spindle
import Testing
import SpindleTestSupport

// Effects as data (issue 6): a reducer returning `Next` (state + effect
// values) and an `EffectRouter` that runs the effects and feeds their events
// back. Stop, errors and live objects are in EffectRouterStopTests.

enum TaskEvent: Sendable, Equatable {
    case request(Int)
    case requestMany([Int])
    case done(Int)
    case log(String)
    case tick
    case ignore
}

enum TaskEffect: Sendable, Equatable {
    case work(Int)
    case record(String)
    case stream(Int)
    case block
    case wait
    case fail(Int)
    case nobodyHandlesThis
}

struct Tally: Sendable, Equatable {
    var requested = 0
    var done: [Int] = []
    var ticks = 0
}

/// Requests become `.work` effects; `.done` records results; `.tick` and
/// `.log` become `.record` effects; `.ignore` changes nothing.
@Sendable func tallyNext(_ state: Tally, _ event: TaskEvent) -> Next<Tally, TaskEffect> {
    var state = state
    switch event {
    case .request(let value):
        state.requested += 1
        return .next(state, effects: [.work(value)])
    case .requestMany(let values):
        state.requested += values.count
        return .next(state, effects: values.map { .work($0) })
    case .done(let value):
        state.done.append(value)
        return .next(state)
    case .tick:
        state.ticks += 1
        return .next(state, effects: [.record("tick \(state.ticks)")])
    case .log(let line):
        return .dispatch([.record(line)])
    case .ignore:
        return .noChange
    }
}

/// `.work(n)` answers `.done(n)` synchronously.
let workRouter = EffectRouter<TaskEffect, TaskEvent>()
    .route({ effect -> Int? in if case .work(let value) = effect { value } else { nil } }) { value in .done(value) }

/// Both effect suites.
@Suite enum EffectsAsData {}

extension EffectsAsData {
@Suite struct EffectsAsDataTests {
    @Test func nextHelpersSayWhatChangesAndWhatIsDispatched() {
        let moved = Next<Int, TaskEffect>.next(3)
        #expect(moved.state == 3 && moved.effects.isEmpty && moved.hasState)
        let movedWithEffects = Next<Int, TaskEffect>.next(4, effects: [.work(1), .record("a")])
        #expect(movedWithEffects.state == 4)
        #expect(movedWithEffects.effects == [.work(1), .record("a")])
        let dispatched = Next<Int, TaskEffect>.dispatch([.block])
        #expect(dispatched.state == nil && !dispatched.hasState && dispatched.effects == [.block])
        let unchanged = Next<Int, TaskEffect>.noChange
        #expect(unchanged == Next(state: nil, effects: []))
        #expect(unchanged != dispatched)
        let description = String(describing: dispatched)
        #expect(description.hasPrefix("Next(state: unchanged, effects: [") && description.hasSuffix("block])"))
        #expect(String(describing: moved) == "Next(state: 3, effects: [])")
    }

    @Test func theReducersReduceComputesTheStateAndKeepsItOnNoChange() {
        let reducer = Reducer(tallyNext, effects: workRouter)
        let once = reducer.reduce(Tally(), .request(7))
        #expect(once == Tally(requested: 1))
        #expect(reducer.reduce(once, .ignore) == once)
        #expect(reducer.reduce(once, .log("x")) == once)
    }

    @Test(arguments: allExecutors, allQueueKinds)
    func aSpinWithOnlyEffectsRunsThemAndReducesTheirEvents(executor: ExecutorKind, queue: QueueKind) async throws {
        try await executor.withExecutor { executor in
            let loop = try Spin(initialState: Tally()) {
                Reducer(tallyNext, effects: workRouter)
            }.start(options: SpinOptions(executor: executor, queue: queue))
            // On a thread of its own: with the effects' events, 200 requests
            // may fill a 256-slot `.block` queue, and a cooperative thread
            // must never wait.
            await onThread { for value in 0..<200 { loop.emit(.request(value)) } }
            #expect(await eventually { loop.state.done.count == 200 })
            await loop.stop()
            // One sync route, one producer: the results come back in order.
            #expect(loop.state.done == Array(0..<200))
            let statistics = loop.statistics
            #expect(statistics.effectsDispatched == 200)
            #expect(statistics.effectsHandled == 200)
            #expect(statistics.effectsDiscardedAtStop == 0 && statistics.unhandledEffects == 0)
        }
    }

    @Test func spinnerSyntaxTakesAReducerWithEffects() async throws {
        let loop = try Spinner.initialState(Tally())
            .reducer(Reducer(tallyNext, effects: workRouter))
            .start()
        loop.emit(.requestMany([5, 6]))
        #expect(await eventually { loop.state.done == [5, 6] })
        await loop.stop()
    }

    @Test func aStreamedSpinAndAUISpinRunTheirEffectsToo() async {
        // Both start loops their own way (spin.stream() subscribes before the
        // reducer thread starts; UISpin adds a render feedback).
        let spin = Spin(initialState: Tally()) {
            Feedback<Tally, TaskEvent>(effect: { state in state.requested == 0 ? .request(8) : nil })
            Reducer(tallyNext, effects: workRouter)
        }
        var streamed: [Int] = []
        for await state in spin.stream() where state.done == [8] {
            streamed = state.done
            break
        }
        #expect(streamed == [8])
        let ui = UISpin(spin: spin, renderOn: DispatchQueue(label: "render"))
        ui.start()
        #expect(await eventually { ui.state.done == [8] })
        // Released here: a released loop stops on its own.
    }

    @Test(arguments: allExecutors)
    func effectsAndStateFeedbacksRunInOneSpin(executor: ExecutorKind) async throws {
        try await executor.withExecutor { executor in
            let recorded = Recorder<String>()
            let statesSeen = Recorder<Int>()
            let router = workRouter
                .route({ effect -> String? in if case .record(let line) = effect { line } else { nil } }) { line in
                    recorded.append(line)
                    return nil
                }
            let loop = try Spin(initialState: Tally()) {
                // A state-driven feedback: ticks once when the third result is in.
                Feedback<Tally, TaskEvent>(effect: { state in
                    statesSeen.append(state.done.count)
                    return state.done.count == 3 && state.ticks == 0 ? .tick : nil
                })
                Reducer(tallyNext, effects: router)
            }.start(options: SpinOptions(executor: executor))
            loop.emit(.requestMany([1, 2, 3]))
            #expect(await eventually { recorded.values == ["tick 1"] })
            await loop.stop()
            #expect(loop.state.done == [1, 2, 3])
            #expect(loop.state.ticks == 1)
            // The feedback saw the initial state first, then every state.
            #expect(statesSeen.values.first == 0)
            #expect(statesSeen.values.last == 3)
            #expect(loop.statistics.effectsHandled == 4)
        }
    }

    @Test func eachRoutesSyncHandlersRunAndAreReducedInDispatchOrder() async throws {
        let evens = DispatchQueue(label: "evens")
        let odds = DispatchQueue(label: "odds")
        let router = EffectRouter<TaskEffect, TaskEvent>()
            .route({ effect -> Int? in
                if case .work(let value) = effect, value % 2 == 0 { value } else { nil }
            }, on: evens) { value in .done(value) }
            .route({ effect -> Int? in
                if case .work(let value) = effect, value % 2 == 1 { value } else { nil }
            }, on: odds) { value in
                .done(value)
            }
        let loop = try Spin(initialState: Tally()) { Reducer(tallyNext, effects: router) }.start()
        // Several effects per reduction, and many reductions.
        for batch in 0..<100 { loop.emit(.requestMany(Array(batch * 10..<batch * 10 + 10))) }
        #expect(await eventually { loop.state.done.count == 1_000 })
        await loop.stop()
        let done = loop.state.done
        #expect(done.filter { $0 % 2 == 0 } == Array(stride(from: 0, to: 1_000, by: 2)))
        #expect(done.filter { $0 % 2 == 1 } == Array(stride(from: 1, to: 1_000, by: 2)))
    }

    @Test func anEmittingHandlersEventsAreReducedInOrderAndAsyncResultsAllArrive() async throws {
        let router = EffectRouter<TaskEffect, TaskEvent>()
            .route({ effect -> Int? in if case .stream(let count) = effect { count } else { nil } },
                   emitting: { count, emitter in
                       for value in 0..<count {
                           await Task.yield()
                           #expect(emitter.emit(.done(value)) == .accepted)
                       }
                   })
            .route({ effect -> Int? in if case .work(let value) = effect { value } else { nil } }) { value async in
                await Task.yield()
                return .done(1_000 + value)
            }
        let next: @Sendable (Tally, TaskEvent) -> Next<Tally, TaskEffect> = { state, event in
            if case .request(let count) = event { return .dispatch([.stream(count)]) }
            return tallyNext(state, event)
        }
        let loop = try Spin(initialState: Tally()) { Reducer(next, effects: router) }.start()
        loop.emit(.request(50))
        #expect(await eventually { loop.state.done.count == 50 })
        #expect(loop.state.done == Array(0..<50))
        // Async handlers run concurrently: all results arrive, in any order.
        loop.emit(.requestMany(Array(0..<20)))
        #expect(await eventually { loop.state.done.count == 70 })
        await loop.stop()
        #expect(Set(loop.state.done.dropFirst(50)) == Set(1_000..<1_020))
    }

    @Test func theSameSpinStartedTwiceRunsTwoIndependentRouters() async throws {
        // Independent: each loop's effects feed back into that loop only,
        // and stopping one leaves the other's router running. (The
        // process-wide router count is not checked: other suites' loops
        // start and end routers meanwhile.)
        let spin = Spin(initialState: Tally()) { Reducer(tallyNext, effects: workRouter) }
        let first = try spin.start()
        let second = try spin.start()
        first.emit(.requestMany([1, 2, 3]))
        second.emit(.requestMany([10, 20]))
        #expect(await eventually { first.state.done == [1, 2, 3] && second.state.done == [10, 20] })
        // Stopping one loop stops its router only.
        await first.stop()
        second.emit(.request(30))
        #expect(await eventually { second.state.done == [10, 20, 30] })
        await second.stop()
        #expect(first.statistics.effectsDispatched == 3)
        #expect(second.statistics.effectsDispatched == 3)
        #expect(first.state.done == [1, 2, 3])
    }
}
}
