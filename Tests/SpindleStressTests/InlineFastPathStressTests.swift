import Dispatch
import Foundation
@_spi(Testing) @_spi(Benchmarks) @_spi(Tuning) @testable import Spindle
import Synchronization
import Testing
import SpindleTestSupport

extension StressSuite {
    /// The inline fast path and the direct path under load: loops on
    /// enqueuing executors over two serial queues (SpindleNIO's shape), fed
    /// by producers on their own threads and by producers whose emits run
    /// *on* the loops' queues, where an emit that finds its loop idle runs
    /// it in place (the direct path when the loop's queue is empty: the
    /// event skips it). Half of the emits on the queues go through
    /// `OwnExecutorEmitter.emit` (SpindleNIO's handler's emit, the in-place path),
    /// interleaved with plain emits into the same loops. One runner at a
    /// time, every accepted item reduced once, in producer order, every
    /// object freed.
    @Suite("The inline fast path")
    struct InlineFastPathStressTests {
        @Test("emits on the loops' own queues run them in place: one runner, every item once, in producer order")
        func emitsOnTheLoopsOwnQueuesRunThemInPlace() async throws {
            // The premise, reductions inside emits on the loops' own queues
            // and schedulings taken by the direct path, is counted; a run
            // without it is run again, never failed on (nor passed).
            var premise = (reducedInPlace: 0, direct: 0, ownExecutor: 0)
            for attempt in 1...3 {
                premise = try await runOnce(attempt: attempt)
                if premise.reducedInPlace > 0, premise.direct > 0, premise.ownExecutor > 0 { break }
            }
            #expect(premise.reducedInPlace > 0, "no emit ran its loop in place in 3 runs: the inline path was not exercised")
            #expect(premise.direct > 0, "no emit took its loop by the direct path in 3 runs")
            #expect(premise.ownExecutor > 0, "no in-place emit (ownExecutorEmitter.emit) reduced its event in place in 3 runs")
        }

        /// One run; returns how many reductions ran inside an emit on the
        /// loop's own queue, how many schedulings the direct path took, and
        /// how many reductions ran inside an in-place emit (`ownExecutorEmitter.emit`).
        private func runOnce(attempt: Int) async throws -> (reducedInPlace: Int, direct: Int, ownExecutor: Int) {
            let baseline = await LiveBaseline.settle()
            let queues = 2
            let executors = try StressExecutors(.enqueuing, name: "inline", queues: queues)
            let loops = 16
            // Producers 0 and 1 emit from threads of their own, into the
            // first half of the loops; producer 2 + q from blocks it submits
            // to queue q, into every loop of queue q. The first half races
            // the thread producers' wake-ups with runs in place (a run in
            // place there needs an idle loop, which busy thread producers,
            // under TSan above all, may never leave); the second half is
            // fed on its queue alone, so its emits find it idle and run it
            // in place: the premise holds on any machine.
            let threadProducers = 2
            let producers = threadProducers + queues
            let itemsPerProducer = max(2_000, StressScale.eventsPerQueue / 1_000)
            let guards = (0..<loops).map { _ in RunnerGuard() }
            let checkers = (0..<loops).map { _ in OrderChecker(producers: producers) }
            // Set while a producer's block runs on queue q: a reduction on
            // queue q that sees it ran inside that block's emit.
            let insideBlock = (0..<queues).map { _ in BlockMark() }
            // Set around a block's in-place emits (`ownExecutorEmitter.emit`) on queue q.
            let insideOwnExecutorEmit = (0..<queues).map { _ in BlockMark() }
            let reducedInPlace = Counter()
            let reducedByOwnExecutorEmit = Counter()
            var accepted = 0
            var direct = 0
            do {
                let running = try (0..<loops).map { index in
                    let mark = insideBlock[index % queues]
                    let ownExecutorMark = insideOwnExecutorEmit[index % queues]
                    return try guardedSpin(guards[index], checkers[index], onReduce: {
                        if mark.isSet { reducedInPlace.add() }
                        if ownExecutorMark.isSet { reducedByOwnExecutorEmit.add() }
                    }).start(options: SpinOptions(
                        executor: executors.executor(for: index),
                        queue: index % 4 < 2 ? .lockFree : .bounded(capacity: 32, overflow: .dropNewest),
                        maxBatch: 8))
                }
                let acceptedPerLoop = Locked<[Int: [Int]]>([:])  // by producer, then loop
                let dropped = Counter()
                let finished = await onThreads(producers) { producer in
                    var random = SplitMix64(seed: 0x1A11E &+ UInt64(attempt * 16 + producer))
                    guard producer >= threadProducers else {
                        var sequence = Array(repeating: 0, count: loops)
                        for _ in 0..<itemsPerProducer {
                            let index = Int.random(in: 0..<(loops / 2), using: &random)
                            switch running[index].emit(.item(Stamped(producer: producer, sequence: sequence[index]))) {
                            case .accepted: sequence[index] += 1
                            case .dropped: dropped.add()
                            case .stopped: break
                            }
                        }
                        acceptedPerLoop.withLock { $0[producer] = sequence }
                        return
                    }
                    // A producer on queue q: blocks of 8 emits, each into a
                    // loop of queue q, submitted from this thread; its
                    // sequences are touched only by its blocks (one queue,
                    // serial) until the final `sync`.
                    let queue = producer - threadProducers
                    let context = executors.queue(for: queue)
                    let sequence = Locked(Array(repeating: 0, count: loops))
                    let mine = (0..<loops).filter { $0 % queues == queue }
                    for _ in 0..<(itemsPerProducer / 8) {
                        let targets = (0..<8).map { _ in mine[Int.random(in: 0..<mine.count, using: &random)] }
                        context.async {
                            insideBlock[queue].set(true)
                            for (position, index) in targets.enumerated() {
                                let next = sequence.withLock { $0[index] }
                                let item = GuardedEvent.item(Stamped(producer: producer, sequence: next))
                                let result: EmitResult
                                if position % 2 == 0 {
                                    insideOwnExecutorEmit[queue].set(true)
                                    result = running[index].ownExecutorEmitter.emit(item)
                                    insideOwnExecutorEmit[queue].set(false)
                                } else {
                                    result = running[index].emit(item)
                                }
                                switch result {
                                case .accepted: sequence.withLock { $0[index] += 1 }
                                case .dropped: dropped.add()
                                case .stopped: break
                                }
                            }
                            insideBlock[queue].set(false)
                        }
                    }
                    context.sync {}
                    acceptedPerLoop.withLock { $0[producer] = sequence.withLock { $0 } }
                }
                #expect(finished, "producers did not finish: a hang")
                accepted = try await stopAndExpectGuarded(
                    running, guards, checkers, accepted: acceptedPerLoop.withLock { $0 }, producers: producers, "inline")
                try await executors.finish()
                let runs = running.reduce(into: (direct: 0, inline: 0)) { sum, loop in
                    sum.direct += loop.runsInPlace.direct
                    sum.inline += loop.runsInPlace.inline
                }
                direct = runs.direct
                stressLine("SPINDLE-STRESS inline attempt \(attempt): \(loops) loops, \(accepted) items, \(reducedInPlace.current) reduced in place, schedulings run in place: \(runs.direct) direct, \(runs.inline) after enqueueing, \(reducedByOwnExecutorEmit.current) reduced inside an in-place emit, \(dropped.current) dropped")
            }
            await baseline.expectReturned()
            return (reducedInPlace.current, direct, reducedByOwnExecutorEmit.current)
        }
    }
}

/// Whether a producer's block is running on one queue (relaxed: the block
/// and the reductions it checks run on that one serial queue).
private final class BlockMark: Sendable {
    private let value = Atomic<Bool>(false)
    func set(_ isSet: Bool) { value.store(isSet, ordering: .relaxed) }
    var isSet: Bool { value.load(ordering: .relaxed) }
}
