@_spi(Testing) @_spi(Benchmarks) @_spi(Tuning) import Spindle
import Testing
import SpindleTestSupport

extension StressSuite {
    /// `emit(contentsOf:)` under Thread Sanitizer: four producers mixing
    /// batches of random sizes (1…300, across the lock-free queue's 128-event
    /// publication runs) with single emits, while the loop stops after a
    /// round-dependent number of reductions. Conservation (accepted =
    /// reduced + discarded), per-producer order without gaps, payloads
    /// visible, and once a producer is answered stopped it is never answered
    /// anything else.
    @Suite("Batch emits racing single emits and stop")
    struct BatchEmitStressTests {
        static let queues: [QueueKind] = stressQueues + [.bounded(capacity: 64, overflow: .dropNewest)]

        @Test(
            "every batched event is accepted-and-accounted, dropped or stopped, in producer order",
            arguments: queues, [StopMode.drain, .discardPending])
        func batchesRacingStopKeepEveryEventAndTheOrder(queue: QueueKind, mode: StopMode) async throws {
            let baseline = await LiveBaseline.settle()
            // At most 10 rounds: they already cover stops after 0 to 45,000
            // reductions, and each round is a second or more under TSan.
            let wanted = min(StressScale.rounds, 10)
            let (checked, raced) = try await raceRounds(wanted) { round in
                try await raceOneStop(queue: queue, mode: mode, round: round)
            }
            #expect(raced == wanted, "the stop met the producers mid-stream in only \(raced) of \(wanted * 20) rounds")
            reportTotal("batch-emit-events", queue: name(of: queue), checked)
            await baseline.expectReturned()
        }

        /// What one producer did, counted per event.
        struct Tally: Sendable {
            var accepted = 0
            var dropped = 0
            var stopped = 0
            var acceptedSequenceSum = 0
            /// Anything but stopped after a stopped answer: never allowed.
            var answeredAfterStopped = 0
            /// A batch whose accepted events were not its prefix, or whose
            /// counts did not add up to its size: never allowed.
            var badBatchResults = 0
        }

        /// - Returns: the events accepted, or nil when the stop did not race
        ///   the producers (one had used all its slots first).
        private func raceOneStop(queue: QueueKind, mode: StopMode, round: Int) async throws -> Int? {
            let producers = 4
            let limit = 300_000  // per producer: a bound for the payload slots
            let payloads = PayloadSlots(producers: producers, perProducer: limit)
            let checker = OrderChecker(producers: producers, contiguous: true, payloads: payloads)
            let loop = try Spin(initialState: 0, feedbacks: [], reducer: checker.reducer)
                .start(options: SpinOptions(queue: queue))
            let tallies = Recorder<Tally>()

            let stopAfter = (round % 10) * 5_000
            // The stop comes after that many reductions, or once a producer
            // is a third of the way through its slots, whichever is first: a
            // producer on a lane can outrun the reducer (under TSan, by far)
            // and must still meet the stop mid-stream.
            let furthest = Counter()
            let stopComing = StopComing()
            async let stopping: StopReport = {
                _ = await eventually(within: 60) {
                    checker.progress.current >= stopAfter || furthest.current >= limit / 3
                }
                stopComing.announce()
                return await loop.stop(mode)
            }()
            let finished = await onThreads(producers) { producer in
                var tally = Tally()
                var random = SplitMix64(seed: UInt64(round * 31 + producer))
                var sequence = 0
                var batch: [Stamped] = []
                // Emit until stopped; dropped events are sent again with the
                // same sequence numbers, so accepted sequences stay contiguous.
                var held = false
                emitting: while sequence < limit {
                    if !held, sequence >= limit / 2 {
                        held = true
                        stopComing.wait()
                    }
                    if random.next() % 4 == 0 {
                        payloads.write(producer: producer, sequence: sequence)
                        switch loop.emit(Stamped(producer: producer, sequence: sequence)) {
                        case .accepted:
                            tally.accepted += 1
                            tally.acceptedSequenceSum &+= sequence
                            sequence += 1
                        case .dropped: tally.dropped += 1
                        case .stopped:
                            tally.stopped += 1
                            break emitting
                        }
                        continue
                    }
                    let size = min(Int(random.next() % 300) + 1, limit - sequence)
                    batch.removeAll(keepingCapacity: true)
                    for offset in 0..<size {
                        payloads.write(producer: producer, sequence: sequence + offset)
                        batch.append(Stamped(producer: producer, sequence: sequence + offset))
                    }
                    let result = loop.emit(contentsOf: batch)
                    if result.count != size || (result.dropped > 0 && result.stopped > 0) { tally.badBatchResults += 1 }
                    for offset in 0..<result.accepted { tally.acceptedSequenceSum &+= sequence + offset }
                    tally.accepted += result.accepted
                    tally.dropped += result.dropped
                    tally.stopped += result.stopped
                    sequence += result.accepted
                    if sequence - furthest.current > 10_000 { furthest.add(sequence - furthest.current) }
                    if result.stopped > 0 { break }
                }
                // Once stopped, always stopped (the slots are never read).
                if sequence < limit {
                    let probe = loop.emit(contentsOf: [Stamped(producer: producer, sequence: sequence)])
                    if probe.stopped != 1 { tally.answeredAfterStopped += 1 }
                }
                tallies.append(tally)
            }
            #expect(finished, "producers did not finish: a hang")
            let report = await stopping
            let statistics = loop.statistics
            let all = tallies.values
            let accepted = all.map(\.accepted).reduce(0, +)
            let dropped = all.map(\.dropped).reduce(0, +)

            #expect(all.count == producers)
            #expect(all.allSatisfy { $0.answeredAfterStopped == 0 }, "an emit was answered after .stopped")
            #expect(all.allSatisfy { $0.badBatchResults == 0 }, "a batch result did not add up")
            if queue != .bounded(capacity: 64, overflow: .dropNewest) { #expect(dropped == 0) }
            #expect(statistics.droppedEvents == dropped)
            // Conservation: accepted = reduced + discarded.
            #expect(report.reduced + report.discarded == accepted)
            #expect(report.reduced == checker.reduced)
            #expect(report.reduced == loop.state)
            if mode == .drain { #expect(report.discarded == 0) }
            // Per-producer FIFO with no gaps, payloads visible.
            #expect(checker.outOfOrder == 0)
            #expect(checker.gaps == 0)
            #expect(checker.badPayloads == 0)
            if mode == .drain {
                #expect(checker.sequenceSum.reduce(0, &+) == all.map(\.acceptedSequenceSum).reduce(0, &+))
            }
            // Raced only if every producer met the stop before its last slot.
            return all.allSatisfy { $0.accepted < limit } ? accepted : nil
        }
    }
}
