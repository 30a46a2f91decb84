import Foundation
@_spi(Testing) @_spi(Benchmarks) @_spi(Tuning) @testable import Spindle
import Testing
import SpindleTestSupport

extension StressSuite {
    /// The reduction gate (SpindleCombine's `stream(from:)` demand) under
    /// load: producer threads flood gated loops while granter threads hand
    /// out demand a few units at a time (each: the demand under the
    /// consumer's lock, the gate opened, then the loop woken), and each
    /// loop's runner spends a unit per state and closes the gate at zero.
    /// Checked: no state is reduced beyond the demand granted before it;
    /// each consumer sees every state once, in order (the state counts the
    /// reductions); every accepted event reduced, in each producer's order;
    /// no wake-up lost (every loop reaches its last event with no help but
    /// the grants); `finished` once per loop, after its stop; every loop
    /// freed.
    @Suite("Reduction gate under Thread Sanitizer")
    struct ReductionGateStressTests {
        /// A consumer with demand, as SpindleCombine's subscription keeps it.
        final class DemandConsumer: Sendable {
            struct Books {
                var demand = 0
                var granted = 0
                var delivered = 0
                var lastState = 0
                var aheadOfDemand = 0
                var outOfOrder = 0
                var finished = 0
            }

            let books = Locked(Books())
            /// The gate, once made; let go at the test's end (the gate's
            /// closures hold this consumer).
            private let gateSlot = Locked<ReductionGate<Int>?>(nil)

            func makeGate() -> ReductionGate<Int> {
                let gate = ReductionGate<Int>(deliver: { [self] in deliver($0) }, finished: { [self] in finish() })
                gateSlot.withLock { $0 = gate }
                return gate
            }

            func letGateGo() { gateSlot.withLock { $0 = nil } }

            /// Adds `units` of demand and opens the gate; the caller wakes the loop.
            func grant(_ units: Int) {
                books.withLock { books in
                    books.demand += units
                    books.granted += units
                    gateSlot.withLock { $0 }?.open()
                }
            }

            /// The runner: one state, one unit of demand.
            private func deliver(_ state: Int) {
                books.withLock { books in
                    books.delivered += 1
                    if books.delivered > books.granted { books.aheadOfDemand += 1 }
                    if state != books.lastState + 1 { books.outOfOrder += 1 }
                    books.lastState = state
                    books.demand -= 1
                    if books.demand <= 0 { gateSlot.withLock { $0 }?.close() }
                }
            }

            private func finish() { books.withLock { $0.finished += 1 } }
        }

        @Test("granted demand a few units at a time: never ahead of it, nothing lost, every loop freed",
              .timeLimit(.minutes(5)), arguments: [ExecutorKind.sharedPool, .privatePool, .dedicatedThread, .serialQueue])
        func grantsRaceTheRunners(kind: ExecutorKind) async throws {
            let baseline = await LiveBaseline.settle()
            let loopCount = 4
            let producers = 2
            let perProducer = max(500, StressScale.rounds * 100)
            let perLoop = producers * perProducer
            let executors = try StressExecutors(kind, name: "gate-stress")
            do {
                let consumers = (0..<loopCount).map { _ in DemandConsumer() }
                let checkers = (0..<loopCount).map { _ in OrderChecker(producers: producers) }
                let loops = (0..<loopCount).map { index in
                    let spin = Spin(initialState: 0, feedbacks: [], reducer: checkers[index].reducer)
                    return SpinLoop(spin: spin, options: SpinOptions(executor: executors.executor(for: index)),
                                    gate: consumers[index].makeGate())
                }
                for loop in loops { #expect(loop.startError == nil) }
                let tallies = Locked<[ProducerTally]>([])
                let finishedEmitting = await onThreads(loopCount * producers + 2) { thread in
                    if thread < loopCount * producers {
                        let loop = loops[thread / producers]
                        var tally = ProducerTally(producer: thread % producers)
                        for sequence in 0..<perProducer {
                            tally.count(loop.emit(Stamped(producer: thread % producers, sequence: sequence)),
                                        sequence: sequence)
                        }
                        tallies.withLock { $0.append(tally) }
                    } else {
                        // A granter: one to three units at a time to a loop
                        // drawn at random, until its half of every loop's
                        // events is covered.
                        var random = SplitMix64(seed: UInt64(thread + 1))
                        var owed = Array(repeating: perLoop / 2, count: loopCount)
                        while let index = owed.indices.filter({ owed[$0] > 0 }).randomElement(using: &random) {
                            let units = min(owed[index], Int(random.next() % 3) + 1)
                            owed[index] -= units
                            consumers[index].grant(units)
                            loops[index].wakeForGate()
                        }
                    }
                }
                #expect(finishedEmitting)
                // Every event has its unit of demand: each loop reaches the
                // last one woken by nothing but the grants.
                let delivered = await eventually(within: 240) {
                    consumers.allSatisfy { $0.books.withLock { $0.delivered } == perLoop }
                }
                #expect(delivered, "delivered: \(consumers.map { $0.books.withLock { $0.delivered } }) of \(perLoop)")
                for loop in loops {
                    let report = await loop.stop()
                    #expect(report.reduced == perLoop)
                }
                for (index, consumer) in consumers.enumerated() {
                    let books = consumer.books.withLock { $0 }
                    #expect(books.aheadOfDemand == 0, "loop \(index): \(books.aheadOfDemand) states beyond the demand")
                    #expect(books.outOfOrder == 0, "loop \(index): \(books.outOfOrder) states out of order")
                    #expect(books.granted == perLoop && books.delivered == perLoop && books.lastState == perLoop)
                    #expect(books.finished == 1)
                    consumer.letGateGo()
                }
                for checker in checkers {
                    #expect(checker.outOfOrder == 0 && checker.gaps == 0 && checker.reduced == perLoop)
                }
                let accepted = tallies.withLock { $0 }.reduce(0) { $0 + $1.accepted }
                #expect(accepted == loopCount * perLoop)
                reportTotal("gated-events", queue: kind.description, accepted)
            }
            try await executors.finish()
            await baseline.expectReturned()
        }
    }
}
