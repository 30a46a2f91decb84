import Dispatch
import Foundation
@_spi(Testing) import Spindle
import Testing
import SpindleTestSupport

// The contract at the edges: no user code under the engine's locks, and
// conflated feedbacks that never see a state twice.

/// An observer whose `eventAccepted` blocks on the first `marker` event
/// until the test releases it.
final class BlockingAcceptObserver: SpinObserver, Sendable {
    typealias State = Int
    typealias Event = Int
    let marker: Int
    let latch = Latch()
    private let blockedOnce = Counter()

    init(marker: Int) { self.marker = marker }

    func eventAccepted(_ event: Int) {
        if event == marker, blockedOnce.add() == 1 { latch.block() }
    }
}

/// An observer whose `effectStarted` blocks on the first run it hears of
/// until the test releases it.
final class BlockingRunStartObserver: SpinObserver, Sendable {
    typealias State = Tally
    typealias Event = TaskEvent
    let latch = Latch()
    private let blockedOnce = Counter()

    func effectStarted(_ run: EffectRun) {
        if blockedOnce.add() == 1 { latch.block() }
    }
}

@Suite("Edges of the contract")
struct EdgeContractTests {
    static let queues: [QueueKind] = [.lockFree, .bounded(capacity: 64, overflow: .block), .bounded(capacity: 64, overflow: .dropNewest)]

    /// An effect run's emit is reported to the observers after the
    /// feedback's lock and the emit's gate section are left: while the hook
    /// blocks, other producers' events are reduced, and the loop stops —
    /// its last slice takes that feedback's lock, and its grace period
    /// waits for every gate section to be left.
    @Test(arguments: queues)
    func anObserverHookThatBlocksHoldsUpOnlyItsOwnCaller(queue: QueueKind) async throws {
        let marker = 1_000_000
        let observer = BlockingAcceptObserver(marker: marker)
        // The run's code after its first suspension runs on this queue, so
        // the hook blocks one of its threads: never a cooperative thread,
        // which the suite's other tests need.
        let effects = DispatchQueue(label: "spindle-test-effects")
        let spin = Spin<Int, Int>(
            initialState: 0,
            feedbacks: [
                Feedback(effect: { (state: Int) async -> Int? in
                    await Task.yield()
                    return state == 0 ? marker : nil
                }, on: effects, applying: .continueOnNewState),
            ],
            reducer: Reducer { state, event in event == marker ? state : state + event }
        ).observed(by: observer)
        let loop = try spin.start(options: SpinOptions(queue: queue))
        #expect(await eventually { observer.latch.isBlocked })
        let producer = await onThread { (0..<100).map { _ in loop.emit(1) } }
        let accepted = producer.filter { $0 == .accepted }.count
        #expect(await eventually { loop.state == accepted })
        // Stopped while the hook still blocks (the stop's end is awaited
        // with a bound, so a stop held by the hook fails here, not hangs).
        let stopped = Counter()
        let stopping = Task {
            await loop.stop()
            stopped.add()
        }
        #expect(await eventually { stopped.current == 1 }, "the stop waited for a blocked observer hook")
        #expect(observer.latch.isBlocked)
        observer.latch.release()
        await stopping.value
        #expect(loop.state == accepted)
    }

    /// An effect router reports a handler run's start after its lock is
    /// released: while the hook blocks the route's drain, the reducer still
    /// dispatches effects to that route (which takes the router's lock) and
    /// other events are reduced. The blocked run's handler, and those
    /// queued behind it, run once the hook returns.
    @Test func aRouterRunHookThatBlocksHoldsUpOnlyItsRoute() async throws {
        let observer = BlockingRunStartObserver()
        let loop = try Spin(initialState: Tally()) {
            Reducer(tallyNext, effects: workRouter)
        }.observed(by: observer).start()
        loop.emit(.request(1))
        #expect(await eventually { observer.latch.isBlocked })
        for value in 2...10 { loop.emit(.request(value)) }
        loop.emit(.done(99))
        #expect(await eventually { loop.state.requested == 10 && loop.state.done == [99] },
                "the loop stood still while a run's observer hook blocked")
        observer.latch.release()
        #expect(await eventually { loop.state.done.count == 11 })
        #expect(Set(loop.state.done) == Set(1...10).union([99]))
        await loop.stop()
    }

    /// A slice that reduces nothing (it only serves a new `states`
    /// subscriber) does not hand the feedbacks the state they already had.
    @Test(arguments: ExecutorKind.allCases, [false, true])
    func aConflatedFeedbackNeverSeesAStateTwiceWhenStatesAreSubscribed(executor: ExecutorKind, onQueue: Bool) async throws {
        let seen = Recorder<Int>()
        let queue = DispatchQueue(label: "spindle-test-conflated")
        try await executor.withExecutor { spinExecutor in
            var feedback = Feedback<Int, Int>(effect: { (state: Int) -> Int? in seen.append(state); return nil })
                .delivering(.latestState)
            if onQueue { feedback = feedback.execute(on: queue) }
            let loop = try Spin<Int, Int>(initialState: 0, feedbacks: [feedback], reducer: Reducer { $0 + $1 })
                .start(options: SpinOptions(executor: spinExecutor))
            loop.emit(1)
            #expect(await eventually { seen.values.last == 1 })
            for _ in 0..<4 {
                var states = loop.states().makeAsyncIterator()
                #expect(await states.next() == 1)
            }
            loop.emit(1)
            #expect(await eventually { seen.values.last == 2 })
            await loop.stop()
        }
        #expect(seen.values == [0, 1, 2])
    }
}
