import Dispatch
import Foundation
import Spindle
import SpindleTestSupport
import Testing

// The inline fast path (ThreadingModelAndGuarantees, PROTOCOL.md): on an
// executor that knows its context (SpindleNIO's shape), an emit made on that
// context outside every slice runs the loop in place. Each test's premise is
// built, not hoped for: the emits run inside `queue.sync`, so nothing else
// runs on the loop's queue meanwhile, and a suspended queue runs nothing.

/// A serial queue as an enqueuing executor that knows its context.
struct ContextQueue: Sendable {
    let marked = MarkedQueue("spindle-test-inline")

    var executor: SpinExecutor {
        let queue = marked.queue
        let mark = marked.mark
        return .enqueuing(name: "inline test queue", isCurrent: { mark.isCurrent }) { queue.async(execute: $0) }
    }

    /// Runs `body` on the queue, after everything queued before it.
    func sync<T>(_ body: () throws -> T) rethrows -> T {
        try marked.queue.sync(execute: body)
    }
}

@Suite struct InlineFastPathTests {
    /// Starts `spin` on `context` and waits until its first slice (the
    /// initial state's) has run, so the loop is idle.
    func startIdle<State, Event>(_ spin: Spin<State, Event>, on context: ContextQueue, maxBatch: Int = 1024) async throws -> SpinLoop<State, Event> {
        var options = SpinOptions(executor: context.executor)
        options.maxBatch = maxBatch
        let loop = try spin.start(options: options)
        await loop.settled()
        // `settled()` returns from inside the last slice: let its
        // scheduling end (the queue is serial).
        context.sync {}
        return loop
    }

    @Test(arguments: [QueueKind.lockFree, .bounded(capacity: 64, overflow: .block), .bounded(capacity: 64, overflow: .dropNewest)])
    func anEmitOnTheLoopsOwnContextIsReducedAndSeenInTheEmit(queue: QueueKind) async throws {
        let context = ContextQueue()
        let seen = Recorder<Int>()
        var options = SpinOptions(executor: context.executor, queue: queue)
        options.maxBatch = 1024
        let loop = try Spin(initialState: 0, feedbacks: [Feedback<Int, CounterEvent>(effect: { (state: Int) in seen.append(state) })],
                        reducer: counterReducer).start(options: options)
        await loop.settled()
        let (single, batch) = context.sync { () -> (Int, Int) in
            loop.emit(.increment)
            // Reduced, and handed to the feedback, before the emit returned.
            let single = seen.values.last ?? -1
            loop.emit(contentsOf: [.increment, .increment])
            return (single, seen.values.last ?? -1)
        }
        #expect(single == 1, "the emit on the loop's context returned before its event was reduced")
        #expect(batch == 3, "the batch emit on the loop's context returned before its events were reduced")
        #expect(loop.state == 3)
        await loop.stop()
    }

    @Test func anEmitFromAnotherThreadIsHandedToTheContext() async throws {
        let context = ContextQueue()
        let loop = try await startIdle(Spin(initialState: 0, feedbacks: [], reducer: counterReducer), on: context)
        // The queue runs nothing while suspended: an emit from this thread
        // cannot have been reduced in place when it returns.
        context.marked.queue.suspend()
        loop.emit(.increment)
        let whileSuspended = loop.state
        context.marked.queue.resume()
        #expect(whileSuspended == 0, "an emit off the loop's context ran the loop in place")
        await loop.settled()
        #expect(loop.state == 1)
        await loop.stop()
    }

    @Test func aSliceRunInPlaceLeavesWhatItsBudgetDoesNotCoverToTheContext() async throws {
        let context = ContextQueue()
        let loop = try await startIdle(Spin(initialState: 0, feedbacks: [], reducer: counterReducer), on: context, maxBatch: 2)
        let inPlace = context.sync { () -> Int in
            loop.emit(contentsOf: Array(repeating: CounterEvent.increment, count: 10))
            return loop.state
        }
        // One slice of the budget ran in the emit; the rest is one task on
        // the queue, which runs once the caller's block has returned.
        #expect(inPlace == 2)
        await loop.settled()
        #expect(loop.state == 10)
        await loop.stop()
    }

    @Test func anEmitFromInsideASliceNeverRunsALoopInPlace() async throws {
        let context = ContextQueue()
        let insideFirst = Locked(false)
        let nested = Recorder<Bool>()
        let second = try await startIdle(Spin(initialState: 0, feedbacks: [
            Feedback<Int, CounterEvent>(effect: { (_: Int) in nested.append(insideFirst.withLock { $0 }) })
        ], reducer: counterReducer), on: context)
        // The first loop's feedback runs in its slice, on the same queue, and
        // emits into the second loop, which is idle.
        let first = try await startIdle(Spin(initialState: 0, feedbacks: [
            Feedback<Int, CounterEvent>(effect: { (state: Int) in
                guard state > 0 else { return }
                insideFirst.withLock { $0 = true }
                second.emit(.increment)
                insideFirst.withLock { $0 = false }
            })
        ], reducer: counterReducer), on: context)
        context.sync { _ = first.emit(.increment) }
        await first.settled()
        await second.settled()
        #expect(second.state == 1)
        // The second loop's feedback saw its initial state, then state 1:
        // neither call ran inside the first loop's slice.
        #expect(nested.values == [false, false], "a loop ran in place inside another loop's slice")
        await first.stop()
        await second.stop()
    }

    @Test func aSliceRunInPlaceReportsToObserversAfterTheEmitsAcceptance() async throws {
        let context = ContextQueue()
        let reports = Recorder<String>()
        let spin = Spin(initialState: 0, feedbacks: [], reducer: counterReducer)
            .observed(by: OrderObserver(reports: reports))
        let loop = try await startIdle(spin, on: context)
        context.sync { _ = loop.emit(.increment) }
        await loop.settled()
        #expect(reports.values == ["accepted", "reduced 1"])
        await loop.stop()
    }

    /// `OwnExecutorEmitter.emit` (SpindleNIO's emit, the in-place path): on the
    /// loop's context, its event and the event its inline feedback answers
    /// with are reduced, and the states handed to the feedback, before it
    /// returns; so on a bounded queue and with an observer, where it takes
    /// the direct path instead. Once the loop is stopped it is refused.
    @Test(arguments: [QueueKind.lockFree, .bounded(capacity: 64, overflow: .dropNewest)], [false, true])
    func anEmitOnTheOwnExecutorIsReducedWithItsFeedbacksAnswerInTheCall(queue: QueueKind, observed: Bool) async throws {
        let context = ContextQueue()
        let seen = Recorder<Int>()
        let reports = Recorder<String>()
        var spin = Spin(initialState: 0, feedbacks: [Feedback<Int, CounterEvent>(effect: { (state: Int) -> CounterEvent? in
            seen.append(state)
            // The answer to state 1: one more increment.
            return state == 1 ? .increment : nil
        })], reducer: counterReducer)
        if observed { spin = spin.observed(by: OrderObserver(reports: reports)) }
        var options = SpinOptions(executor: context.executor, queue: queue)
        options.maxBatch = 1024
        let loop = try spin.start(options: options)
        await loop.settled()
        context.sync {}
        let (result, inCall) = context.sync { () -> (EmitResult, [Int]) in
            (loop.ownExecutorEmitter.emit(.increment), seen.values)
        }
        #expect(result == .accepted)
        #expect(inCall == [0, 1, 2], "the emit returned before its event and the feedback's answer were reduced")
        if observed {
            // The feedback runs right after the reduction, before the
            // observers hear of it: its answer's acceptance comes first.
            #expect(reports.values == ["accepted", "accepted", "reduced 1", "reduced 2"])
        }
        await loop.stop()
        #expect(context.sync { loop.ownExecutorEmitter.emit(.increment) } == .stopped)
        #expect(loop.state == 2)
    }
}

/// Records acceptances and reductions, in the order it hears of them.
private struct OrderObserver: SpinObserver {
    let reports: Recorder<String>
    func eventAccepted(_ event: CounterEvent) { reports.append("accepted") }
    func eventReduced(_ event: CounterEvent, newState: Int, reduction: Int) { reports.append("reduced \(newState)") }
}
