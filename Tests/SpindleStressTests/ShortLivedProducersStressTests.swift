@_spi(Testing) @_spi(Benchmarks) @_spi(Tuning) import Spindle
import CSpindle
import Testing
import SpindleTestSupport

extension StressSuite {
    /// Producer threads that come and go: waves of 64 threads, each emitting
    /// a burst (single emits and `emit(contentsOf:)` batches of random
    /// sizes) into one running loop and then exiting, so whatever an emit
    /// keeps per producing thread is made and left behind 64 times a wave.
    /// Checked: every event accepted and reduced once, each thread's in
    /// order without gaps; every loop, worker and queue freed at the end.
    @Suite("Short-lived producer threads")
    struct ShortLivedProducersStressTests {
        @Test("waves of 64 threads each emit a burst and exit; nothing lost, each in order",
              .timeLimit(.minutes(5)), arguments: stressQueues)
        func shortLivedThreadsEmitBurstsAndExit(queue: QueueKind) async throws {
            let baseline = await LiveBaseline.settle()
            // Lanes (the default queue): a thread here may take one and then
            // exits; its lane must be freed (process-wide count: the stress
            // suite runs serialized). LaneStressTests takes lanes for sure.
            let lanesLive = spindle_live_lanes()
            let threadsPerWave = 64
            let waves = max(2, min(StressScale.rounds / 4, 5))
            let burst = 1_000
            do {
                let checker = OrderChecker(producers: threadsPerWave * waves)
                let loop = try Spin(initialState: 0, feedbacks: [], reducer: checker.reducer)
                    .start(options: SpinOptions(queue: queue))
                let tallies = Recorder<ProducerTally>()
                for wave in 0..<waves {
                    let finished = await onThreads(threadsPerWave) { index in
                        let producer = wave * threadsPerWave + index
                        var tally = ProducerTally(producer: producer)
                        var random = SplitMix64(seed: UInt64(producer + 1))
                        var sequence = 0
                        var batch: [Stamped] = []
                        while sequence < burst {
                            if random.next() % 2 == 0 {
                                tally.count(loop.emit(Stamped(producer: producer, sequence: sequence)), sequence: sequence)
                                sequence += 1
                                continue
                            }
                            let size = min(Int(random.next() % 200) + 1, burst - sequence)
                            batch.removeAll(keepingCapacity: true)
                            for offset in 0..<size { batch.append(Stamped(producer: producer, sequence: sequence + offset)) }
                            let result = loop.emit(contentsOf: batch)
                            for offset in 0..<result.accepted { tally.acceptedSequenceSum &+= sequence + offset }
                            tally.accepted += result.accepted
                            tally.dropped += result.dropped
                            tally.stopped += result.stopped
                            sequence += size
                        }
                        tallies.append(tally)
                    }
                    #expect(finished, "wave \(wave) did not finish")
                }
                let report = await loop.stop()
                let all = tallies.values
                let total = threadsPerWave * waves * burst
                #expect(all.count == threadsPerWave * waves)
                #expect(all.map(\.accepted).reduce(0, +) == total)
                #expect(all.allSatisfy { $0.dropped == 0 && $0.stopped == 0 })
                #expect(report.reduced == total)
                #expect(checker.reduced == total)
                #expect(checker.outOfOrder == 0 && checker.gaps == 0,
                        "\(checker.outOfOrder) out of order, \(checker.gaps) gaps")
                for tally in all {
                    #expect(checker.reducedPerProducer[tally.producer] == burst)
                    #expect(checker.sequenceSum[tally.producer] == tally.acceptedSequenceSum)
                }
                reportTotal("short-lived-producer-events", queue: name(of: queue), total)
            }
            await baseline.expectReturned()
            let lanesFreed = await eventually { spindle_live_lanes() <= lanesLive }
            #expect(lanesFreed, "lanes left behind: \(spindle_live_lanes() - lanesLive)")
        }
    }
}
