@_spi(Testing) @_spi(Benchmarks) @_spi(Tuning) import Spindle
import Testing
import SpindleTestSupport

extension StressSuite {
    /// Issue 4, item 2: producer threads emit while the loop stops. Every
    /// emit answers `.accepted` (then reduced, or counted as discarded by a
    /// discarding stop), `.dropped` (only on a `.dropNewest` ring) or
    /// `.stopped`, and once a producer is answered `.stopped` it is never
    /// answered anything else.
    @Suite("Producers racing stop")
    struct StopRaceStressTests {
        static let queues: [QueueKind] = stressQueues + [.bounded(capacity: 64, overflow: .dropNewest)]

        @Test(
            "every emit racing a stop is accepted-and-accounted or stopped, with exact arithmetic",
            arguments: queues, [StopMode.drain, .discardPending])
        func emitsRacingStopAreAcceptedAndAccountedOrStopped(queue: QueueKind, mode: StopMode) async throws {
            let baseline = await LiveBaseline.settle()
            let (checked, raced) = try await raceRounds(StressScale.rounds) { round in
                try await raceOneStop(queue: queue, mode: mode, round: round)
            }
            #expect(raced == StressScale.rounds, "the stop met the producers mid-stream in only \(raced) of \(StressScale.rounds * 20) rounds")
            reportTotal("stop-race-events", queue: name(of: queue), checked)
            await baseline.expectReturned()
        }

        /// One loop, four producers emitting until answered `.stopped`, and a
        /// stop that lands after a round-dependent number of reductions.
        /// - Returns: the events accepted (all accounted for), or nil when the
        ///   stop did not race the producers (one had used all its slots).
        private func raceOneStop(queue: QueueKind, mode: StopMode, round: Int) async throws -> Int? {
            let producers = 4
            let limit = 200_000  // per producer: a bound for the payload slots
            let payloads = PayloadSlots(producers: producers, perProducer: limit)
            let dropping = queue == .bounded(capacity: 64, overflow: .dropNewest)
            let checker = OrderChecker(producers: producers, contiguous: true, payloads: payloads)
            let loop = try Spin(initialState: 0, feedbacks: [], reducer: checker.reducer)
                .start(options: SpinOptions(queue: queue))
            let tallies = Recorder<ProducerTally>()
            let extraStoppedProbes = 16
            let stopComing = StopComing()

            // Stop after 0, 1k, 2k, ... reductions: from "before anything
            // ran" to "mid-stream".
            let stopAfter = (round % 10) * 1_000
            async let stopping: StopReport = {
                _ = await eventually(within: 60) { checker.progress.current >= stopAfter }
                stopComing.announce()
                return await loop.stop(mode)
            }()
            let finished = await onThreads(producers) { producer in
                var tally = ProducerTally(producer: producer)
                var sequence = 0
                // Emit until stopped; a dropped event is retried with the
                // same sequence, so accepted sequences stay contiguous.
                while sequence < limit {
                    // Held until the stop is on its way: it meets them mid-stream.
                    if sequence == limit / 2 { stopComing.wait() }
                    payloads.write(producer: producer, sequence: sequence)
                    let result = loop.emit(Stamped(producer: producer, sequence: sequence))
                    tally.count(result, sequence: sequence)
                    if result == .accepted { sequence += 1 }
                    if result == .stopped { break }
                }
                // Once stopped, always stopped (the slot is never read: these
                // events are refused).
                for _ in 0..<extraStoppedProbes where sequence < limit {
                    tally.count(loop.emit(Stamped(producer: producer, sequence: sequence)), sequence: sequence)
                }
                tallies.append(tally)
            }
            #expect(finished, "producers did not finish: a hang")
            let report = await stopping
            let statistics = loop.statistics
            let all = tallies.values.sorted { $0.producer < $1.producer }
            let accepted = all.map(\.accepted).reduce(0, +)
            let dropped = all.map(\.dropped).reduce(0, +)
            let stopped = all.map(\.stopped).reduce(0, +)

            #expect(all.count == producers)
            #expect(all.allSatisfy { $0.answeredAfterStopped == 0 }, "an emit was answered after .stopped")
            if !dropping { #expect(dropped == 0) }
            #expect(statistics.droppedEvents == dropped)
            #expect(statistics.rejectedAfterStop == stopped)
            // Conservation: accepted = reduced + discarded.
            #expect(report.reduced + report.discarded == accepted)
            #expect(report.reduced == checker.reduced)
            #expect(report.reduced == loop.state)
            #expect(statistics.reducedEvents == report.reduced)
            #expect(statistics.discardedAtStop == report.discarded)
            if mode == .drain { #expect(report.discarded == 0) }
            // Per-producer FIFO: the reduced events of each producer are a
            // prefix of what it had accepted (all of it, when draining).
            #expect(checker.outOfOrder == 0)
            #expect(checker.gaps == 0)
            #expect(checker.badPayloads == 0)
            let reducedPerProducer = checker.reducedPerProducer
            let acceptedPerProducer = all.map(\.accepted)
            #expect(reducedPerProducer.reduce(0, +) == report.reduced)
            if all.count == producers {
                for producer in 0..<producers {
                    #expect(reducedPerProducer[producer] <= acceptedPerProducer[producer])
                }
                if mode == .drain {
                    #expect(reducedPerProducer == acceptedPerProducer)
                    #expect(checker.sequenceSum == all.map(\.acceptedSequenceSum))
                }
            }
            // Raced only if every producer met the stop before its last slot.
            return all.allSatisfy { $0.accepted < limit } ? accepted : nil
        }
    }
}
