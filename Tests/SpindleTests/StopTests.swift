@_spi(Testing) @_spi(Benchmarks) @_spi(Tuning) import Spindle
import Testing
import SpindleTestSupport

@Suite struct StopTests {
    @Test(arguments: allExecutors, allQueueKinds)
    func emitAfterStopAnswersStopped(executor: ExecutorKind, queue: QueueKind) async throws {
        try await executor.withExecutor { executor in
            let loop = try Spin(initialState: 0, feedbacks: [], reducer: counterReducer)
                .start(options: SpinOptions(executor: executor, queue: queue))
            #expect(loop.emit(.increment) == .accepted)
            await loop.stop()
            #expect(loop.isStopped)
            #expect(loop.emit(.increment) == .stopped)
            #expect(loop.state == 1)
            #expect(loop.statistics.rejectedAfterStop == 1)
        }
    }

    @Test(arguments: allExecutors)
    func stopDrainsEverythingAcceptedBeforeIt(executor: ExecutorKind) async throws {
        try await executor.withExecutor { executor in
            let loop = try Spin(initialState: 0, feedbacks: [], reducer: counterReducer)
                .start(options: SpinOptions(executor: executor))
            for _ in 0..<100_000 { loop.emit(.increment) }
            let report = await loop.stop()
            #expect(report == StopReport(reduced: 100_000, discarded: 0))
            #expect(loop.state == 100_000)
        }
    }

    @Test(arguments: allExecutors)
    func stoppingTwiceOrConcurrentlyReturnsTheSameReport(executor: ExecutorKind) async throws {
        try await executor.withExecutor { executor in
            let loop = try Spin(initialState: 0, feedbacks: [], reducer: counterReducer)
                .start(options: SpinOptions(executor: executor))
            for _ in 0..<1_000 { loop.emit(.increment) }
            async let first = loop.stop()
            async let second = loop.stop()
            let (a, b) = await (first, second)
            let c = await loop.stop()
            #expect(a == b)
            #expect(b == c)
            #expect(a.reduced == 1_000)
        }
    }

    // The reducer blocks: never on the shared pool, which every test shares.
    @Test(arguments: ExecutorKind.blockable)
    func discardingStopThrowsPendingEventsAwayAndCountsThem(executor: ExecutorKind) async throws {
        try await executor.withExecutor { executor in
            let latch = Latch()
            let reducer = Reducer<Int, CounterEvent> { state, _ in
                if state == 0 { latch.block() }
                return state + 1
            }
            let loop = try Spin(initialState: 0, feedbacks: [], reducer: reducer)
                .start(options: SpinOptions(executor: executor, maxBatch: 1))
            loop.emit(.increment)
            #expect(await eventually { latch.isBlocked })
            for _ in 0..<50 { #expect(loop.emit(.increment) == .accepted) }
            async let stopping = loop.stop(.discardPending)
            // Probe until the gate is closed; probes accepted before that are
            // pending events too.
            let probesAccepted = Recorder<Bool>()
            #expect(await eventually {
                let result = loop.emit(.increment)
                if result == .accepted { probesAccepted.append(true) }
                return result == .stopped
            })
            latch.release()
            let report = await stopping
            #expect(report == StopReport(reduced: 1, discarded: 50 + probesAccepted.count))
            #expect(loop.state == 1)
            #expect(loop.statistics.discardedAtStop == 50 + probesAccepted.count)
        }
    }

    @Test(arguments: allExecutors)
    func stopFromInsideAFeedbackCompletes(executor: ExecutorKind) async throws {
        try await executor.withExecutor { executor in
            let stopped = Recorder<StopReport>()
            let holder = LoopHolder()
            let loop = try Spin(initialState: 0) {
                Feedback<Int, CounterEvent>(effect: { state in
                    if state == 3, let loop = holder.loop {
                        Task { stopped.append(await loop.stop()) }
                    }
                    return (1..<3).contains(state) ? .increment : nil
                })
                Reducer(counterReducer.reduce)
            }.start(options: SpinOptions(executor: executor))
            holder.loop = loop
            loop.emit(.increment)  // counting starts once the feedback can reach the loop
            #expect(await eventually { stopped.count == 1 })
            #expect(stopped.values.first?.reduced == 3)
            #expect(loop.isStopped)
            holder.loop = nil
        }
    }

    @Test(arguments: allExecutors)
    func releasingTheLastReferenceStopsTheLoopAndFreesItsFeedbacks(executor: ExecutorKind) async throws {
        try await executor.withExecutor { executor in
            let freed = Recorder<Bool>()
            let reduced = Recorder<Int>()
            do {
                let probe = Probe { freed.append(true) }
                let loop = try Spin(initialState: 0) {
                    Feedback<Int, CounterEvent>(effect: { state in
                        _ = probe
                        reduced.append(state)
                        return nil
                    })
                    Reducer(counterReducer.reduce)
                }.start(options: SpinOptions(executor: executor))
                for _ in 0..<10 { loop.emit(.increment) }
                #expect(await eventually { reduced.count == 11 })
            }
            #expect(await eventually { freed.count == 1 })
        }
    }

    @Test(arguments: allExecutors)
    func anEffectThatNeverFinishesDoesNotBlockStop(executor: ExecutorKind) async throws {
        try await executor.withExecutor { executor in
            let door = OpenOnce()
            let loop = try Spin(initialState: 0) {
                Feedback<Int, CounterEvent>(effect: { (_: Int) async -> CounterEvent? in
                    // Ignores cancellation: returns only once the test is
                    // done (a task left behind forever would hold other
                    // tests' live-object counts above their baselines).
                    await door.wait()
                    return .increment
                })
                Reducer(counterReducer.reduce)
            }.start(options: SpinOptions(executor: executor))
            #expect(await eventually { loop.statistics.effectRunsStarted == 1 })
            let report = await loop.stop()
            #expect(report.reduced == 0)
            #expect(loop.statistics.effectRunsCancelled == 1)
            door.open()
            #expect(await eventually { loop.statistics.lateEventsDiscarded == 1 })
            #expect(loop.state == 0)
        }
    }
}

/// Lets a feedback reach its own loop (tests only).
final class LoopHolder: @unchecked Sendable {
    // @unchecked: set once before the feedback can read it and cleared after
    // the loop stopped; the test orders these by hand.
    var loop: SpinLoop<Int, CounterEvent>?
}
