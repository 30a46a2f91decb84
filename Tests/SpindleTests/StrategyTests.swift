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

    @Test func cancelledEffectEventsAreNeverReduced() async {
        let gates = Gates()
        let loop = spin(gates, .cancelOnNewState).start()
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

    @Test func continuedEffectsAllHaveTheirEventsReduced() async {
        let gates = Gates()
        let loop = spin(gates, .continueOnNewState).start()
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

    @Test func cancellationEndsAnAsyncSequenceEffect() async {
        let iterations = Recorder<Int>()
        let loop = Spin(initialState: RunState()) {
            Feedback<RunState, RunEvent>(
                effect: { (state: RunState) -> AsyncStream<RunEvent> in
                    AsyncStream { continuation in
                        let task = Task {
                            var index = 0
                            while !Task.isCancelled {
                                iterations.append(state.ticks)
                                index += 1
                                try? await Task.sleep(nanoseconds: 1_000_000)
                            }
                            continuation.finish()
                        }
                        continuation.onTermination = { _ in task.cancel() }
                    }
                },
                filteredBy: { $0.lastWasTick }
            )
            Reducer(runReducer.reduce)
        }.start()
        loop.emit(.tick)
        #expect(await eventually { iterations.values.contains(1) })
        loop.emit(.tick)
        #expect(await eventually { iterations.values.contains(2) })
        #expect(await eventually { loop.statistics.effectRunsCancelled == 1 })
        // Run 1's stream is ended: after a while no more run-1 iterations.
        let before = iterations.values.filter { $0 == 1 }.count
        try? await Task.sleep(nanoseconds: 50_000_000)
        let after = iterations.values.filter { $0 == 1 }.count
        #expect(after <= before + 1)
        await loop.stop()
    }

    @Test func stopCancelsRunningEffectsAndDiscardsTheirLateEvents() async {
        let gates = Gates()
        let loop = spin(gates, .continueOnNewState).start()
        loop.emit(.tick)
        #expect(await eventually { loop.statistics.effectRunsStarted == 1 })
        await loop.stop()
        #expect(loop.statistics.effectRunsCancelled == 1)
        gates.open(1)
        #expect(await eventually { loop.statistics.lateEventsDiscarded == 1 })
        #expect(loop.state.done.isEmpty)
    }
}
