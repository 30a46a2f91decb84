import CSpindle
@_spi(Testing) @testable import Spindle
import Testing
import SpindleTestSupport

extension StressSuite {
    /// The pool's sleeper set alone (`PoolCore.SleeperSet`), raced as the
    /// pool races it, without the parkers' sleeps: threads list themselves
    /// and, after a moment, either find their slot filled or leave the set
    /// (a sleeper woken by its own re-check or a timeout), while other
    /// threads wake whoever is listed, each wake handing over a token of
    /// its own. Checked: every token handed over is taken exactly once (no
    /// slot filled twice, none filled after its thread listed itself
    /// again), the set is empty at the end, and the set is freed. The race
    /// the protocol exists for (a wake that claims a thread leaving the set
    /// before it filled the slot) must have happened, or the run is made
    /// again.
    @Suite("The pool's sleeper set")
    struct SleeperSetStressTests {
        @Test("every token a wake hands over is taken once, across three words of threads",
              .timeLimit(.minutes(5)))
        func everyHandedTokenIsTakenOnce() async {
            // Three sleepers in three words (indices 0, 64, 129), two wakers.
            let indices = [0, 64, 129]
            let rounds = max(2_000, StressScale.eventsPerQueue / 1_000)
            var attempts = 0
            var claimedWhileLeaving = 0
            while true {
                attempts += 1
                // Every other run, each wake pauses between its claim and
                // its store, as a waking thread switched out there would.
                var set: PoolCore.SleeperSet? = PoolCore.SleeperSet(
                    capacity: 130, pausesBeforeFill: attempts % 2 == 1 ? 256 : 0)
                weak let released = set
                let outcome = await race(set.take()!, indices: indices, rounds: rounds)
                // The racing threads' closures hold the set until they end.
                #expect(await eventually { released == nil }, "the sleeper set was not freed")
                #expect(outcome.handed.count == outcome.taken.count,
                        "\(outcome.handed.count) tokens handed over, \(outcome.taken.count) taken")
                #expect(Set(outcome.taken).count == outcome.taken.count, "a token was taken twice")
                #expect(Set(outcome.taken) == Set(outcome.handed), "the tokens taken are not the ones handed over")
                #expect(outcome.listedAtEnd == 0, "\(outcome.listedAtEnd) threads still listed")
                claimedWhileLeaving += outcome.claimedWhileLeaving
                // At least a run with pauses and one without.
                if (claimedWhileLeaving > 0 && attempts >= 2) || attempts == 20 {
                    #expect(claimedWhileLeaving > 0,
                            "no wake claimed a leaving thread in \(attempts) runs of \(rounds) rounds")
                    break
                }
            }
        }

        private struct Outcome {
            var handed: [UInt] = []
            var taken: [UInt] = []
            var claimedWhileLeaving = 0
            var listedAtEnd = 0
        }

        private func race(_ sleeperSet: PoolCore.SleeperSet, indices: [Int], rounds: Int) async -> Outcome {
            let handed = Locked<[UInt]>([])
            let taken = Locked<[UInt]>([])
            let claimedWhileLeaving = Counter()
            let sleepersLeft = Counter()
            sleepersLeft.add(indices.count)
            let wakers = 2
            let finished = await onThreads(indices.count + wakers) { thread in
                if thread < indices.count {
                    let index = indices[thread]
                    let slot = sleeperSet.sleeper(index).slot
                    var mine: [UInt] = []
                    var claimed = 0
                    for round in 0..<rounds {
                        sleeperSet.list(index)
                        // A moment listed, longer every few rounds.
                        for _ in 0..<(round % 7) * 16 { spindle_cpu_relax() }
                        if slot.load(ordering: .acquiring) == 0, sleeperSet.leave(index) { claimed += 1 }
                        // Full now if a wake claimed the thread: take it, as
                        // `takeHandedTask` does.
                        let token = slot.exchange(0, ordering: .acquiring)
                        if token != 0 { mine.append(token) }
                    }
                    taken.withLock { $0.append(contentsOf: mine) }
                    claimedWhileLeaving.add(claimed)
                    sleepersLeft.add(-1)
                } else {
                    var mine: [UInt] = []
                    var sequence: UInt = 2
                    // Tokens are never 0 (an empty slot) nor 1 (`look`).
                    let waker = UInt(thread - indices.count) << 40
                    while sleepersLeft.current > 0 {
                        if sleeperSet.wake(handing: waker | sequence) != nil {
                            mine.append(waker | sequence)
                            sequence += 1
                        }
                    }
                    handed.withLock { $0.append(contentsOf: mine) }
                }
            }
            #expect(finished, "the racing threads did not finish")
            var outcome = Outcome()
            outcome.handed = handed.withLock { $0 }
            outcome.taken = taken.withLock { $0 }
            outcome.claimedWhileLeaving = claimedWhileLeaving.current
            outcome.listedAtEnd = sleeperSet.count
            return outcome
        }
    }
}
