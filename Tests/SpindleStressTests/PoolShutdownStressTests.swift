import Dispatch
import Foundation
@_spi(Testing) @_spi(Benchmarks) @_spi(Tuning) import Spindle
import SpindleQueueFixture
import Testing
import SpindleTestSupport

extension StressSuite {
    /// A pool shut down while producer threads feed its loops and another
    /// thread keeps starting new ones: every loop that started is stopped
    /// with drain (every accepted event reduced, in producer order), every
    /// start after the shutdown began fails with `.poolShutDown`, and the
    /// pool's threads are gone.
    @Suite("Pool shutdown")
    struct PoolShutdownStressTests {
        static let queues: [QueueKind] = [.lockFree, .bounded(capacity: 64, overflow: .block), .locked]

        @Test("shutting a pool down under producers drains every loop; starting on it afterwards fails")
        func shuttingAPoolDownUnderProducersDrainsEveryLoop() async throws {
            let baseline = await LiveBaseline.settle()
            var checked = 0
            for round in 0..<StressScale.rounds {
                checked += try await shutDownOnePool(round: round)
            }
            reportTotal("pool-shutdown-events", queue: "mixed", checked)
            await baseline.expectReturned()
        }

        /// One pool, 16 loops, 4 producers emitting until each loop answers
        /// `.stopped`, a thread starting loops until the pool refuses, and
        /// two shutdowns once a round-dependent number of events is reduced.
        /// - Returns: the events accepted (all accounted for).
        private func shutDownOnePool(round: Int) async throws -> Int {
            let producers = 4
            let loops = 16
            let poolName = "shutdown-\(round)"
            let pool = try ReducerPool(threads: 2, name: poolName)
            let reduced = Counter()
            @Sendable func spin(_ checker: OrderChecker) -> Spin<Int, Stamped> {
                Spin(initialState: 0) {
                    Feedback<Int, Stamped>(effect: { _ in nil })
                    Reducer<Int, Stamped> { count, event in
                        checker.observe(event)
                        reduced.add()
                        return count + 1
                    }
                }
            }
            let checkers = (0..<loops).map { _ in OrderChecker(producers: producers) }
            let running = try (0..<loops).map { index in
                try spin(checkers[index]).start(options: SpinOptions(
                    executor: .pool(pool), queue: Self.queues[index % Self.queues.count], maxBatch: 32))
            }
            #expect(pool.liveLoops == loops)

            // Producers: round-robin over the loops until each answers
            // .stopped, keeping their backlog bounded (this is about the
            // shutdown, not about a queue growing under overload).
            let tallies = Locked<[Int: [ProducerTally]]>([:])
            async let producing: Bool = onThreads(producers, within: 600) { producer in
                var perLoop = (0..<loops).map { _ in ProducerTally(producer: producer) }
                var sequence = Array(repeating: 0, count: loops)
                var open = Set(0..<loops)
                var acceptedTotal = 0
                let limit = 2_000_000
                while !open.isEmpty && acceptedTotal < limit {
                    for index in open.sorted() {
                        let result = running[index].emit(Stamped(producer: producer, sequence: sequence[index]))
                        perLoop[index].count(result, sequence: sequence[index])
                        if result == .accepted {
                            sequence[index] += 1
                            acceptedTotal += 1
                        } else if result == .stopped {
                            open.remove(index)
                        }
                    }
                    while acceptedTotal - reduced.current / producers > 2_000, !open.isEmpty {
                        if running.allSatisfy(\.isStopped) { break }
                        sched_yield()
                    }
                }
                tallies.withLock { $0[producer] = perLoop }
            }

            // A starter: from the moment the shutdown is called, starts loops
            // until the pool refuses one; each either started (and is
            // stopped by the shutdown) or was refused.
            let startedDuring = Locked<[(loop: SpinLoop<Int, Stamped>, accepted: Bool)]>([])
            let refusals = Locked<[SpinExecutorError]>([])
            let refusedButRunning = Counter()
            let shuttingDown = Flag()
            async let starting: Bool = onThreads(1) { _ in
                while !shuttingDown.isRaised { usleep(50) }
                while true {
                    // As a bridge starts one: a refusal is a loop stopped
                    // from birth, which must answer as one.
                    let loop = SpinLoop(spin: spin(OrderChecker(producers: 1)), options: SpinOptions(executor: .pool(pool)))
                    if let error = loop.startError {
                        refusals.withLock { $0.append(error) }
                        if !loop.isStopped || loop.emit(Stamped(producer: 0, sequence: 0)) != .stopped {
                            refusedButRunning.add()
                        }
                        return
                    }
                    let accepted = loop.emit(Stamped(producer: 0, sequence: 0)) == .accepted
                    startedDuring.withLock { $0.append((loop, accepted)) }
                }
            }

            _ = await eventually(within: 60) { reduced.current >= (round % 5 + 1) * 1_000 }
            shuttingDown.raise()
            async let first: Void = pool.shutdown()
            async let second: Void = pool.shutdown()
            try await first
            try await second
            #expect(pool.isShutDown)
            #expect(pool.liveLoops == 0)
            #expect(await producing, "round \(round): producers did not finish: a hang")
            #expect(await starting, "round \(round): the starter did not finish")

            // Every loop that started was stopped with drain by the shutdown.
            let started = startedDuring.withLock { $0 }
            #expect(started.allSatisfy { $0.loop.isStopped }, "round \(round): a loop started during the shutdown is still running")
            #expect(started.allSatisfy { $0.loop.state == ($0.accepted ? 1 : 0) },
                    "round \(round): a loop started during the shutdown lost its event")
            #expect(refusals.withLock { $0 } == [.poolShutDown(pool: poolName)])
            #expect(refusedButRunning.current == 0, "round \(round): a refused loop was not stopped from birth")

            let all = tallies.withLock { $0 }
            #expect(all.count == producers)
            var accepted = 0
            for index in 0..<loops {
                let loop = running[index]
                let checker = checkers[index]
                let perProducer = (0..<producers).compactMap { all[$0]?[index] }
                let acceptedHere = perProducer.map(\.accepted).reduce(0, +)
                accepted += acceptedHere
                #expect(loop.isStopped, "round \(round), loop \(index)")
                #expect(await loop.stop() == StopReport(reduced: acceptedHere, discarded: 0), "round \(round), loop \(index)")
                #expect(checker.reducedPerProducer == perProducer.map(\.accepted), "round \(round), loop \(index)")
                #expect(checker.outOfOrder == 0 && checker.gaps == 0, "round \(round), loop \(index)")
                #expect(perProducer.allSatisfy { $0.stopped >= 1 && $0.answeredAfterStopped == 0 && $0.dropped == 0 },
                        "round \(round), loop \(index): \(perProducer)")
            }

            // The pool takes no more loops.
            let spinAfter = spin(OrderChecker(producers: 1))
            #expect(throws: SpinExecutorError.poolShutDown(pool: poolName)) {
                try spinAfter.start(options: SpinOptions(executor: .pool(pool)))
            }
            // As a bridge starts one: stopped from birth, with the reason.
            let refused = SpinLoop(spin: spinAfter, options: SpinOptions(executor: .pool(pool)))
            #expect(refused.startError == .poolShutDown(pool: poolName))
            #expect(refused.emit(Stamped(producer: 0, sequence: 0)) == .stopped)
            return accepted
        }
    }
}
