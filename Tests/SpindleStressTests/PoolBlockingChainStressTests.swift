@_spi(Testing) @_spi(Benchmarks) @_spi(Tuning) @testable import Spindle
import Testing
import SpindleTestSupport

/// A chain link's state: how many events it reduced, and the last one (which
/// its feedback passes on).
private struct LinkState: Sendable {
    var reduced = 0
    var last: Stamped?
}

extension StressSuite {
    /// Loops on one small pool, chained: each has a one-slot `.block` ring,
    /// and each one's feedback (on the pool, the default placement) emits
    /// every event it reduced into the next. So pool threads often wait,
    /// inside a slice, for space in a loop that only a thread of the same
    /// pool can drain; with every thread waiting, the pool must start a
    /// spare (`PoolCore.threadWillBlock`). Checked: no deadlock; every event
    /// crosses the whole chain exactly once, each producer's in order, at
    /// every link; every emit along the chain is accepted; every loop,
    /// worker, queue and spare thread is gone at the end.
    @Suite("Blocking chains on a pool")
    struct PoolBlockingChainStressTests {
        @Test("a chain of one-slot .block loops moves every event end to end, in order",
              .timeLimit(.minutes(5)), arguments: [1, 2])
        func aBlockingChainMovesEveryEventEndToEnd(threads: Int) async throws {
            let baseline = await LiveBaseline.settle()
            let producers = 2
            let perProducer = max(2_000, StressScale.eventsPerQueue / 500)  // 20,000 at CI's scale
            let links = 6
            let pool = try ReducerPool(threads: threads, name: "chain-\(threads)")
            let checkers = (0..<links).map { _ in OrderChecker(producers: producers) }
            let refused = Counter()
            let options = SpinOptions(executor: .pool(pool), queue: .bounded(capacity: 1, overflow: .block))

            // Built from the end: each link's feedback holds the next loop.
            var chain: [SpinLoop<LinkState, Stamped>] = []
            for index in (0..<links).reversed() {
                let checker = checkers[index]
                let next = chain.first
                let loop = try Spin(initialState: LinkState()) {
                    Feedback<LinkState, Stamped>(effect: { (state: LinkState) -> Stamped? in
                        if let next, let event = state.last, next.emit(event) != .accepted { refused.add() }
                        return nil
                    })
                    Reducer<LinkState, Stamped> { state, event in
                        checker.observe(event)
                        return LinkState(reduced: state.reduced + 1, last: event)
                    }
                }.start(options: options)
                chain.insert(loop, at: 0)
            }
            let tallies = Locked<[ProducerTally]>([])
            // The head only in this closure: the loops must all be released
            // before the live-object check at the end.
            let produced = await onThreads(producers) { [head = chain[0]] producer in
                var tally = ProducerTally(producer: producer)
                for sequence in 0..<perProducer {
                    tally.count(head.emit(Stamped(producer: producer, sequence: sequence)), sequence: sequence)
                }
                tallies.withLock { $0.append(tally) }
            }
            guard produced else {
                // What the failure looked like: the chain still moving
                // (slowly: waits ending on their timeouts) or standing (a
                // deadlock), and how many spares the pool had started.
                let before = checkers.map(\.progress.current)
                try await Task.sleep(for: .seconds(1))
                let after = checkers.map(\.progress.current)
                Issue.record("""
                    producers did not finish: a pool thread waiting for space did not help; \
                    reduced per link \(before), a second later \(after); \
                    links: \(chain.map(\.schedulingSnapshot)); pool: \(pool.schedulingSnapshot)
                    """)
                return
            }
            // Head to tail: a link's drain runs its feedback's last emits
            // into the next link, which is still open.
            for loop in chain { await loop.stop() }

            let total = producers * perProducer
            #expect(tallies.withLock { $0.map(\.accepted).reduce(0, +) } == total)
            #expect(refused.current == 0, "emits along the chain not accepted")
            for (index, checker) in checkers.enumerated() {
                #expect(checker.reduced == total, "link \(index) reduced \(checker.reduced) of \(total)")
                #expect(checker.outOfOrder == 0 && checker.gaps == 0,
                        "link \(index): \(checker.outOfOrder) out of order, \(checker.gaps) gaps")
            }
            reportTotal("blocking-chain-events", queue: "ring(1,block) threads=\(threads)", total * links)
            // Nothing blocks any more: the spares leave on their own.
            #expect(await eventually { pool.spareThreads == 0 }, "\(pool.spareThreads) spares stayed")
            chain.removeAll()
            try await pool.shutdown()
            await baseline.expectReturned()
        }
    }
}
