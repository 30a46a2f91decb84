import Foundation
@_spi(Testing) @_spi(Benchmarks) @_spi(Tuning) @testable import Spindle
import Testing
import SpindleTestSupport

extension StressSuite {
    /// Searchers switched out, again and again. A pool thread looking for
    /// work is held (a test hook) as the kernel would switch it out, for a
    /// few hundred microseconds at a time, while producers emit bursts into
    /// two loops on the pool with pauses in which the loops go idle and the
    /// other thread sleeps: the rescue (an emit finding its loop queued
    /// behind the held searcher wakes the sleeper) races the held thread's
    /// return, the schedules and the pool's own wakes. Checked: every event
    /// accepted and reduced once, each producer's in order without gaps on
    /// each loop; the pool and loops freed. (That the rescue runs a loop the
    /// held thread would otherwise keep waiting is `ReducerPoolTests`'
    /// `aLoopQueuedBehindASwitchedOutSearcherRunsOnTheSleepingThread`.)
    @Suite("Searchers switched out")
    struct SwitchedOutSearcherStressTests {
        @Test("a pool's searcher held again and again while producers emit in bursts: nothing lost, each in order",
              .timeLimit(.minutes(5)))
        func searchersHeldAgainAndAgain() async throws {
            let baseline = await LiveBaseline.settle()
            let producers = 2
            let perLoop = max(20_000, StressScale.rounds * 2_000)  // per producer
            let pool = try ReducerPool(threads: 2, name: "switched-out")
            let holds = Counter()
            do {
                let checkers = (0..<2).map { _ in OrderChecker(producers: producers) }
                let loops = try checkers.map { checker in
                    try Spin(initialState: 0, feedbacks: [], reducer: checker.reducer)
                        .start(options: SpinOptions(executor: .pool(pool)))
                }
                let tallies = Recorder<[ProducerTally]>()
                let producersDone = Counter()
                // Threads 0..<producers emit; the last one is the switcher:
                // it holds the next searcher, keeps it a moment once held,
                // lets it go, until the producers are done.
                let finished = await onThreads(producers + 1) { producer in
                    if producer == producers {
                        while producersDone.current < producers {
                            pool.holdNextSearcher()
                            let deadline = Date().addingTimeInterval(1)
                            while !pool.isHoldingSearcher, Date() < deadline { usleep(20) }
                            if pool.isHoldingSearcher { holds.add() }
                            usleep(300)
                            pool.releaseHeldSearcher()
                            usleep(100)
                        }
                        return
                    }
                    defer { producersDone.add() }
                    var tally = loops.indices.map { _ in ProducerTally(producer: producer) }
                    var sequence = [0, 0]
                    var random = SplitMix64(seed: 0x5EA2C4 &+ UInt64(producer))
                    while sequence.min()! < perLoop {
                        let burst = Int(random.next() % 64) + 1
                        for _ in 0..<burst {
                            let index = Int(random.next() % 2)
                            guard sequence[index] < perLoop else { continue }
                            let result = loops[index].emit(Stamped(producer: producer, sequence: sequence[index]))
                            tally[index].count(result, sequence: sequence[index])
                            sequence[index] += 1
                        }
                        usleep(UInt32(random.next() % 150))  // the loops go idle, a thread sleeps
                    }
                    tallies.append(tally)
                }
                pool.releaseHeldSearcher()
                #expect(finished, "producers did not finish: a hang")
                let all = tallies.values
                #expect(all.count == producers)
                for (index, loop) in loops.enumerated() {
                    let report = await loop.stop()
                    let checker = checkers[index]
                    #expect(report.reduced == producers * perLoop, "loop \(index)")
                    #expect(checker.reduced == producers * perLoop, "loop \(index)")
                    #expect(checker.outOfOrder == 0 && checker.gaps == 0,
                            "loop \(index): \(checker.outOfOrder) out of order, \(checker.gaps) gaps")
                    for tally in all.map({ $0[index] }) {
                        #expect(tally.accepted == perLoop && tally.dropped == 0 && tally.stopped == 0)
                        #expect(checker.reducedPerProducer[tally.producer] == perLoop)
                        #expect(checker.sequenceSum[tally.producer] == tally.acceptedSequenceSum)
                    }
                }
                reportTotal("switched-out-searcher-events", queue: "lockFree", producers * perLoop * 2)
                stressLine("SPINDLE-STRESS switched-out \(holds.current) searchers held, \(pool.rescues) rescues")
            }
            try await pool.shutdown()
            await baseline.expectReturned()
        }
    }
}
