import Spindle
import Testing
import SpindleTestSupport

/// A state where ticks start effect runs and `done` records which runs'
/// events were reduced.
struct RunState: Sendable, Equatable {
    var ticks = 0
    var done: [Int] = []
    var lastWasTick = false
}

enum RunEvent: Sendable {
    case tick
    case finished(Int)
}

let runReducer = Reducer<RunState, RunEvent> { state, event in
    var state = state
    switch event {
    case .tick:
        state.ticks += 1
        state.lastWasTick = true
    case .finished(let run):
        state.done.append(run)
        state.lastWasTick = false
    }
    return state
}

@Suite struct StrategyTests {
    /// Run N waits for gate N (ignoring cancellation), then emits .finished(N).
    func spin(_ gates: Gates, _ strategy: ExecutionStrategy) -> Spin<RunState, RunEvent> {
        Spin(initialState: RunState()) {
            Feedback<RunState, RunEvent>(
                effect: { (state: RunState) async -> RunEvent? in
                    await gates.wait(state.ticks)
                    return .finished(state.ticks)
                },
                filteredBy: { $0.lastWasTick },
                applying: strategy
            )
            Reducer(runReducer.reduce)
        }
    }

    @Test(arguments: allExecutors)
    func cancelledEffectEventsAreNeverReduced(executor: ExecutorKind) async throws {
        try await executor.withExecutor { executor in
            let gates = Gates()
            let loop = try spin(gates, .cancelOnNewState).start(options: SpinOptions(executor: executor))
            loop.emit(.tick)
            #expect(await eventually { loop.statistics.effectRunsStarted == 1 })
            loop.emit(.tick)
            #expect(await eventually { loop.statistics.effectRunsCancelled == 1 })
            gates.open(1)  // run 1 ignores its cancellation and returns anyway
            #expect(await eventually { loop.statistics.lateEventsDiscarded == 1 })
            gates.open(2)
            #expect(await eventually { loop.state.done == [2] })
            await loop.stop()
            #expect(loop.state.done == [2])
        }
    }

    @Test(arguments: allExecutors)
    func continuedEffectsAllHaveTheirEventsReduced(executor: ExecutorKind) async throws {
        try await executor.withExecutor { executor in
            let gates = Gates()
            let loop = try spin(gates, .continueOnNewState).start(options: SpinOptions(executor: executor))
            loop.emit(.tick)
            loop.emit(.tick)
            #expect(await eventually { loop.statistics.effectRunsStarted == 2 })
            gates.open(1)
            gates.open(2)
            #expect(await eventually { loop.state.done.sorted() == [1, 2] })
            await loop.stop()
            #expect(loop.statistics.lateEventsDiscarded == 0)
            #expect(loop.statistics.effectRunsCancelled == 0)
        }
    }

    @Test(arguments: allExecutors)
    func cancellationEndsAnAsyncSequenceEffect(executor: ExecutorKind) async throws {
        try await executor.withExecutor { executor in
            let iterations = Recorder<Int>()
            // The run for each tick, once its sequence was ended (by its
            // cancellation: the producing task loops until then).
            let ended = Recorder<Int>()
            let loop = try Spin(initialState: RunState()) {
                Feedback<RunState, RunEvent>(
                    effect: { (state: RunState) -> AsyncStream<RunEvent> in
                        AsyncStream { continuation in
                            let task = Task {
                                while !Task.isCancelled {
                                    iterations.append(state.ticks)
                                    try? await Task.sleep(nanoseconds: 1_000_000)
                                }
                                ended.append(state.ticks)
                                continuation.finish()
                            }
                            continuation.onTermination = { _ in task.cancel() }
                        }
                    },
                    filteredBy: { $0.lastWasTick }
                )
                Reducer(runReducer.reduce)
            }.start(options: SpinOptions(executor: executor))
            loop.emit(.tick)
            #expect(await eventually { iterations.values.contains(1) })
            loop.emit(.tick)
            #expect(await eventually { iterations.values.contains(2) })
            #expect(await eventually { loop.statistics.effectRunsCancelled == 1 })
            // Run 1's sequence is ended; run 2's goes on until the stop.
            #expect(await eventually { ended.values == [1] })
            await loop.stop()
            #expect(await eventually { ended.values == [1, 2] })
        }
    }

    @Test(arguments: allExecutors)
    func stopCancelsRunningEffectsAndDiscardsTheirLateEvents(executor: ExecutorKind) async throws {
        try await executor.withExecutor { executor in
            let gates = Gates()
            let loop = try spin(gates, .continueOnNewState).start(options: SpinOptions(executor: executor))
            loop.emit(.tick)
            #expect(await eventually { loop.statistics.effectRunsStarted == 1 })
            await loop.stop()
            #expect(loop.statistics.effectRunsCancelled == 1)
            gates.open(1)
            #expect(await eventually { loop.statistics.lateEventsDiscarded == 1 })
            #expect(loop.state.done.isEmpty)
        }
    }
}
