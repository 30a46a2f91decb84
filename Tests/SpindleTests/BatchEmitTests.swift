import Spindle
import Synchronization
import Testing
import SpindleTestSupport

/// `emit(contentsOf:)`: order, accounting, overflow policies, stop, and the
/// runner's own batches, on every queue and executor.
@Suite struct BatchEmitTests {
    /// A loop whose state is every event it reduced, in order.
    static func appending() -> Spin<[Int], Int> {
        Spin(initialState: [], feedbacks: [], reducer: Reducer { state, event in state + [event] })
    }

    @Test(arguments: ExecutorKind.allCases, allQueueKinds)
    func batchesKeepTheirOrderAndTheirPlaceAmongSingleEmits(executor: ExecutorKind, queue: QueueKind) async throws {
        try await executor.withExecutor { executor in
            let loop = try Self.appending().start(options: SpinOptions(executor: executor, queue: queue))
            // On a thread of its own: 700 events overfill a 256-slot
            // `.block` queue, whose emits then wait, and a cooperative
            // thread must never wait (the suite's other tests need them).
            let results = await onThread { () -> [EmitBatchResult] in
                loop.emit(0)
                let first = loop.emit(contentsOf: Array(1...100))
                loop.emit(101)
                // Larger than one publication run of the lock-free queue (128).
                let large = loop.emit(contentsOf: Array(102...600))
                // A sequence without contiguous storage takes the copying path.
                let copied = loop.emit(contentsOf: stride(from: 601, through: 700, by: 1))
                return [first, large, copied, loop.emit(contentsOf: [Int]())]
            }
            #expect(results[0] == EmitBatchResult(accepted: 100, dropped: 0, stopped: 0))
            #expect(results[1].accepted == 499)
            #expect(results[2].accepted == 100)
            #expect(results[3] == EmitBatchResult(accepted: 0, dropped: 0, stopped: 0))
            let report = await loop.stop()
            #expect(report == StopReport(reduced: 701, discarded: 0))
            #expect(loop.state == Array(0...700))
            #expect(loop.statistics.reducedEvents == 701)
        }
    }

    @Test(arguments: ExecutorKind.allCases, allQueueKinds)
    func aBatchAfterStopIsRefusedWhole(executor: ExecutorKind, queue: QueueKind) async throws {
        try await executor.withExecutor { executor in
            let loop = try Self.appending().start(options: SpinOptions(executor: executor, queue: queue))
            loop.emit(contentsOf: [1, 2, 3])
            _ = await loop.stop()
            let result = loop.emit(contentsOf: [4, 5, 6, 7])
            #expect(result == EmitBatchResult(accepted: 0, dropped: 0, stopped: 4))
            #expect(result.count == 4)
            #expect(loop.statistics.rejectedAfterStop == 4)
            #expect(loop.state == [1, 2, 3])
        }
    }

    // The tests with a blocked reducer run on every executor but the shared
    // pool, which every test shares.

    /// A loop that blocks on its first event until the latch is released.
    static func blocking(_ latch: Latch) -> Spin<[Int], Int> {
        Spin(initialState: [], feedbacks: [], reducer: Reducer { state, event in
            if state.isEmpty { latch.block() }
            return state + [event]
        })
    }

    @Test(arguments: ExecutorKind.blockable)
    func dropNewestAcceptsWhatFitsAndDropsTheRestOfTheBatch(executor: ExecutorKind) async throws {
        try await executor.withExecutor { executor in
            let latch = Latch()
            let loop = try Self.blocking(latch).start(options: SpinOptions(
                executor: executor, queue: .bounded(capacity: 8, overflow: .dropNewest)))
            loop.emit(0)
            #expect(await eventually { latch.isBlocked })
            let result = loop.emit(contentsOf: Array(1...20))
            #expect(result == EmitBatchResult(accepted: 8, dropped: 12, stopped: 0))
            #expect(loop.statistics.droppedEvents == 12)
            latch.release()
            let report = await loop.stop()
            #expect(report.reduced == 9)
            #expect(loop.state == Array(0...8), "the accepted events are the batch's first ones, in order")
        }
    }

    @Test(arguments: ExecutorKind.blockable)
    func blockWaitsForSpaceAndAcceptsTheWholeBatchInOrder(executor: ExecutorKind) async throws {
        try await executor.withExecutor { executor in
            let latch = Latch()
            let loop = try Self.blocking(latch).start(options: SpinOptions(
                executor: executor, queue: .bounded(capacity: 8, overflow: .block)))
            loop.emit(0)
            #expect(await eventually { latch.isBlocked })
            let box = LoopBox()
            async let result = onThread {
                defer { box.emitted.store(1, ordering: .sequentiallyConsistent) }
                return loop.emit(contentsOf: Array(1...50))
            }
            // The batch cannot finish while the reducer is blocked (8 slots
            // for 50 events): release it, and the batch completes.
            let finishedEarly = box.emitted.load(ordering: .sequentiallyConsistent) == 1
            #expect(!finishedEarly)
            latch.release()
            #expect(await result == EmitBatchResult(accepted: 50, dropped: 0, stopped: 0))
            let report = await loop.stop()
            #expect(report.reduced == 51)
            #expect(loop.state == Array(0...50))
        }
    }

    @Test(arguments: ExecutorKind.blockable)
    func aBatchBlockedOnAFullRingIsPartlyAcceptedAndTheRestStoppedWhenTheLoopStops(executor: ExecutorKind) async throws {
        try await executor.withExecutor { executor in
            let latch = Latch()
            let loop = try Self.blocking(latch).start(options: SpinOptions(
                executor: executor, queue: .bounded(capacity: 4, overflow: .block)))
            loop.emit(0)
            #expect(await eventually { latch.isBlocked })
            async let blocked = onThread { loop.emit(contentsOf: Array(1...10)) }
            // The first four fit; the batch then waits (or, if the stop comes
            // first, is refused whole). Either way the arithmetic is exact.
            async let stopping = loop.stop()
            latch.release()
            let result = await blocked
            let report = await stopping
            #expect(result.count == 10)
            #expect(result.dropped == 0)
            #expect(result.stopped > 0 || result.accepted == 10)
            #expect(report.reduced == 1 + result.accepted)
            #expect(loop.state == Array(0...result.accepted))
            #expect(loop.statistics.rejectedAfterStop == result.stopped)
        }
    }

    @Test(arguments: ExecutorKind.allCases)
    func aBatchEmittedOnTheLoopsOwnExecutorIsReducedInOrder(executor: ExecutorKind) async throws {
        try await executor.withExecutor { executor in
            let box = LoopBox()
            // A queue-less feedback runs on the loop's executor: its batch
            // takes the runner's path (never waits on its own queue).
            let emitFromRunner = Feedback<[Int], Int>(effect: { (state: [Int]) -> Int? in
                if state == [0] { box.emitted.store(box.loop?.emit(contentsOf: [1, 2, 3]).accepted ?? -1, ordering: .sequentiallyConsistent) }
                return nil
            })
            let loop = try Spin(initialState: [], feedbacks: [emitFromRunner], reducer: Reducer { state, event in state + [event] })
                .start(options: SpinOptions(executor: executor, queue: .bounded(capacity: 2, overflow: .block)))
            box.loop = loop
            loop.emit(0)
            #expect(await eventually { loop.state.count == 4 })
            let emitted = box.emitted.load(ordering: .sequentiallyConsistent)
            #expect(emitted == 3)
            _ = await loop.stop()
            #expect(loop.state == [0, 1, 2, 3])
        }
    }

    /// Hands the loop to its own feedback (set before the first event).
    final class LoopBox: @unchecked Sendable {
        // @unchecked: `loop` is written once, before the event that makes
        // the feedback read it is emitted (the emit orders the two).
        var loop: SpinLoop<[Int], Int>?
        let emitted = Atomic<Int>(0)
    }
}
