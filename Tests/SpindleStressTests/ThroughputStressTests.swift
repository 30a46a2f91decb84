@_spi(Testing) @_spi(Benchmarks) @_spi(Tuning) import Spindle
import Testing
import SpindleTestSupport

extension StressSuite {
    /// Issue 4, item 1: many events from 1, 2, 4 and 8 producer threads on
    /// each queue; every accepted event reduced once, in producer order, with
    /// its payload slot visible to the reducer.
    @Suite("Throughput under Thread Sanitizer")
    struct ThroughputStressTests {
        @Test(
            "every accepted event is reduced once, in producer order, with its payload",
            arguments: stressQueues, [1, 2, 4, 8])
        func everyAcceptedEventIsReducedOnceInProducerOrder(queue: QueueKind, producers: Int) async throws {
            let baseline = await LiveBaseline.settle()
            do {
                // The per-queue total is split evenly over the four producer counts.
                let perProducer = StressScale.eventsPerQueue / 4 / producers
                let payloads = PayloadSlots(producers: producers, perProducer: perProducer)
                let checker = OrderChecker(producers: producers, payloads: payloads)
                let loop = try Spin(initialState: 0, feedbacks: [], reducer: checker.reducer)
                    .start(options: SpinOptions(queue: queue))
                let tallies = Recorder<ProducerTally>()

                let started = ContinuousClock.now
                let finished = await onThreads(producers) { producer in
                    var tally = ProducerTally(producer: producer)
                    for sequence in 0..<perProducer {
                        payloads.write(producer: producer, sequence: sequence)
                        tally.count(loop.emit(Stamped(producer: producer, sequence: sequence)), sequence: sequence)
                    }
                    tallies.append(tally)
                }
                #expect(finished, "producers did not finish: a hang")
                let report = await loop.stop()
                let elapsed = ContinuousClock.now - started

                let accepted = tallies.values.map(\.accepted).reduce(0, +)
                #expect(accepted == producers * perProducer, "every emit on a running loop is accepted")
                #expect(report == StopReport(reduced: accepted, discarded: 0))
                #expect(loop.state == accepted)
                #expect(loop.statistics.reducedEvents == accepted)
                #expect(checker.reduced == accepted)
                #expect(checker.outOfOrder == 0)
                #expect(checker.gaps == 0)
                #expect(checker.badPayloads == 0)
                #expect(checker.lastSequence == Array(repeating: perProducer - 1, count: producers))
                #expect(checker.sequenceSum == Array(repeating: perProducer * (perProducer - 1) / 2, count: producers))
                reportTotal("events", queue: name(of: queue), checker.reduced, over: elapsed)
            }
            await baseline.expectReturned()
        }
    }
}
