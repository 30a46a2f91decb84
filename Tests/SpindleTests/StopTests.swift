import Spindle
import Testing
import SpindleTestSupport

/// Captured by a feedback to learn when the loop lets go of its feedbacks.
final class Probe: Sendable {
    let onDeinit: @Sendable () -> Void
    init(onDeinit: @escaping @Sendable () -> Void) { self.onDeinit = onDeinit }
    deinit { onDeinit() }
}

@Suite struct StopTests {
    @Test(arguments: allQueueKinds)
    func emitAfterStopAnswersStopped(queue: QueueKind) async {
        let loop = Spin(initialState: 0, feedbacks: [], reducer: counterReducer).start(options: SpinOptions(queue: queue))
        #expect(loop.emit(.increment) == .accepted)
        await loop.stop()
        #expect(loop.isStopped)
        #expect(loop.emit(.increment) == .stopped)
        #expect(loop.state == 1)
        #expect(loop.statistics.rejectedAfterStop == 1)
    }

    @Test func stopDrainsEverythingAcceptedBeforeIt() async {
        let loop = Spin(initialState: 0, feedbacks: [], reducer: counterReducer).start()
        for _ in 0..<100_000 { loop.emit(.increment) }
        let report = await loop.stop()
        #expect(report == StopReport(reduced: 100_000, discarded: 0))
        #expect(loop.state == 100_000)
    }

    @Test func stoppingTwiceOrConcurrentlyReturnsTheSameReport() async {
        let loop = Spin(initialState: 0, feedbacks: [], reducer: counterReducer).start()
        for _ in 0..<1_000 { loop.emit(.increment) }
        async let first = loop.stop()
        async let second = loop.stop()
        let (a, b) = await (first, second)
        let c = await loop.stop()
        #expect(a == b)
        #expect(b == c)
        #expect(a.reduced == 1_000)
    }

    @Test func discardingStopThrowsPendingEventsAwayAndCountsThem() async {
        let latch = Latch()
        let reducer = Reducer<Int, CounterEvent> { state, _ in
            if state == 0 { latch.block() }
            return state + 1
        }
        let loop = Spin(initialState: 0, feedbacks: [], reducer: reducer)
            .start(options: SpinOptions(maxBatch: 1))
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

    @Test func stopFromInsideAFeedbackCompletes() async {
        let stopped = Recorder<StopReport>()
        let holder = LoopHolder()
        let loop = Spin(initialState: 0) {
            Feedback<Int, CounterEvent>(effect: { state in
                if state == 3, let loop = holder.loop {
                    Task { stopped.append(await loop.stop()) }
                }
                return (1..<3).contains(state) ? .increment : nil
            })
            Reducer(counterReducer.reduce)
        }.start()
        holder.loop = loop
        loop.emit(.increment)  // counting starts once the feedback can reach the loop
        #expect(await eventually { stopped.count == 1 })
        #expect(stopped.values.first?.reduced == 3)
        #expect(loop.isStopped)
        holder.loop = nil
    }

    @Test func releasingTheLastReferenceStopsTheLoopAndFreesItsFeedbacks() async {
        let freed = Recorder<Bool>()
        let reduced = Recorder<Int>()
        do {
            let probe = Probe { freed.append(true) }
            let loop = Spin(initialState: 0) {
                Feedback<Int, CounterEvent>(effect: { state in
                    _ = probe
                    reduced.append(state)
                    return nil
                })
                Reducer(counterReducer.reduce)
            }.start()
            for _ in 0..<10 { loop.emit(.increment) }
            #expect(await eventually { reduced.count == 11 })
        }
        #expect(await eventually { freed.count == 1 })
    }

    @Test func anEffectThatNeverFinishesDoesNotBlockStop() async {
        let loop = Spin(initialState: 0) {
            Feedback<Int, CounterEvent>(effect: { (_: Int) async -> CounterEvent? in
                // Ignores cancellation and never returns while the test runs.
                await withCheckedContinuation { (_: CheckedContinuation<Void, Never>) in }
                return nil
            })
            Reducer(counterReducer.reduce)
        }.start()
        #expect(await eventually { loop.statistics.effectRunsStarted == 1 })
        let report = await loop.stop()
        #expect(report.reduced == 0)
        #expect(loop.statistics.effectRunsCancelled == 1)
    }
}

/// Lets a feedback reach its own loop (tests only).
final class LoopHolder: @unchecked Sendable {
    // @unchecked: set once before the feedback can read it and cleared after
    // the loop stopped; the test orders these by hand.
    var loop: SpinLoop<Int, CounterEvent>?
}
