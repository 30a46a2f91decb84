import Dispatch
@_spi(Testing) @_spi(Benchmarks) @_spi(Tuning) import Spindle
import Testing
import SpindleTestSupport

extension StressSuite {
    /// Conflated delivery (`StateDelivery.latestState`) under Thread
    /// Sanitizer: four producers flood a loop that has a conflated feedback
    /// on a queue, a conflated feedback on the loop's executor, and one that
    /// takes every state. Conservation and per-producer order (in the
    /// reducer), the every-state feedback sees each state once in order, the
    /// conflated ones see increasing states and get to the final one while
    /// the loop runs, and everything is freed.
    @Suite("Conflated feedbacks under four producers")
    struct ConflatedDeliveryStressTests {
        @Test("conflated feedbacks see increasing states and end on the final one", arguments: stressQueues)
        func conflatedFeedbacksSeeIncreasingStatesEndingOnTheFinalOne(queue: QueueKind) async throws {
            let baseline = await LiveBaseline.settle()
            let producers = 4
            let perProducer = max(StressScale.eventsPerQueue / 200, 10_000)
            let checker = OrderChecker(producers: producers)
            let onQueue = Locked<[Int]>([])
            let inline = Locked<[Int]>([])
            let every = Locked<[Int]>([])
            do {
                let renderQueue = DispatchQueue(label: "spindle-stress-conflated")
                let loop = try Spin(
                    initialState: 0,
                    feedbacks: [
                        Feedback(effect: { (count: Int) in onQueue.withLock { $0.append(count) } }, on: renderQueue)
                            .delivering(.latestState),
                        Feedback(effect: { (count: Int) in inline.withLock { $0.append(count) } })
                            .delivering(.latestState),
                        Feedback(effect: { (count: Int) in every.withLock { $0.append(count) } }),
                    ],
                    reducer: checker.reducer
                ).start(options: SpinOptions(queue: queue))
                let finished = await onThreads(producers) { producer in
                    for sequence in 0..<perProducer {
                        loop.emit(Stamped(producer: producer, sequence: sequence))
                    }
                }
                #expect(finished)
                let total = producers * perProducer
                // While the loop runs, a conflated feedback gets to the latest
                // state; a stop drops a delivery still waiting on a queue (as
                // for any feedback on a queue), so wait for it first.
                #expect(await eventually {
                    onQueue.withLock { $0.last } == total && inline.withLock { $0.last } == total
                })
                let report = await loop.stop()
                #expect(report.reduced == total)
                #expect(checker.reduced == total)
                #expect(checker.outOfOrder == 0 && checker.gaps == 0)
                for (name, seen) in [("queue", onQueue.withLock { $0 }), ("inline", inline.withLock { $0 })] {
                    #expect(seen.last == total, "\(name): ends on \(String(describing: seen.last)), not \(total)")
                    #expect(zip(seen, seen.dropFirst()).allSatisfy { $0 < $1 }, "\(name): not increasing")
                }
                #expect(every.withLock { $0 } == Array(0...total))
                reportTotal("conflated-events", queue: name(of: queue), total)
            }
            await baseline.expectReturned()
        }
    }
}
