@testable import Spindle
import Testing
import SpindleTestSupport

/// `SpinLoop.states`: its own subscription per sequence, the closed loop it
/// is made for, and how a subscriber leaves.
@Suite struct SpinStatesTests {
    /// A closed loop (emit, await that state, emit again): every round trip
    /// gets exactly its state, whether `next()` found it while watching or
    /// after suspending.
    @Test(arguments: allExecutors)
    func aClosedLoopGetsEachStateInTurn(executor: ExecutorKind) async throws {
        try await executor.withExecutor { executor in
            let loop = try Spin(initialState: 0, feedbacks: [], reducer: counterReducer)
                .start(options: SpinOptions(executor: executor))
            var states = loop.states().makeAsyncIterator()
            #expect(await states.next() == 0)
            var seen: [Int] = []
            for _ in 1...2_000 {
                loop.emit(.increment)
                if let state = await states.next() { seen.append(state) }
            }
            #expect(seen == Array(1...2_000))
            await loop.stop()
            #expect(await states.next() == nil)
        }
    }

    /// Cancelling the task that waits in `next()` ends that subscription
    /// (nil now and after), and the loop stops delivering to it; the loop
    /// itself runs on.
    @Test func cancellingAWaitingNextEndsTheSubscription() async throws {
        let loop = try Spin(initialState: 0, feedbacks: [], reducer: counterReducer).start()
        let stream = loop.states()
        let firstSeen = Locked(false)
        let consumer = Task {
            var iterator = stream.makeAsyncIterator()
            var values: [Int] = []
            while let value = await iterator.next() {
                values.append(value)
                firstSeen.withLock { $0 = true }
            }
            // Ended: a later call says so again.
            let again = await iterator.next()
            return (values, again)
        }
        #expect(await eventually { firstSeen.withLock { $0 } })
        #expect(loop.stateSubscriberCount == 1)
        consumer.cancel()
        let (values, again) = await consumer.value
        #expect(values == [0])
        #expect(again == nil)
        #expect(loop.stateSubscriberCount == 0)
        loop.emit(.increment)
        #expect(await eventually { loop.state == 1 })
        await loop.stop()
    }

    /// A sequence whose value and iterators are all gone leaves the loop,
    /// which then collects no states for it.
    @Test func droppingTheSequenceEndsTheSubscription() async throws {
        let loop = try Spin(initialState: 0, feedbacks: [], reducer: counterReducer).start()
        do {
            var iterator = loop.states().makeAsyncIterator()
            #expect(await iterator.next() == 0)
            #expect(loop.stateSubscriberCount == 1)
        }
        #expect(loop.stateSubscriberCount == 0)
        for _ in 0..<100 { loop.emit(.increment) }
        #expect(await eventually { loop.state == 100 })
        await loop.stop()
    }

    /// Each read of `states` is a subscription of its own: both see every
    /// state from the moment they were made.
    @Test func twoSequencesEachSeeEveryState() async throws {
        let loop = try Spin(initialState: 0, feedbacks: [], reducer: counterReducer).start()
        let first = loop.states()
        let second = loop.states()
        let collect = { @Sendable (stream: SpinStates<Int>) in
            Task { () -> [Int] in
                var values: [Int] = []
                for await value in stream { values.append(value) }
                return values
            }
        }
        let firstValues = collect(first)
        let secondValues = collect(second)
        for _ in 0..<1_000 { loop.emit(.increment) }
        await loop.stop()
        #expect(await firstValues.value == Array(0...1_000))
        #expect(await secondValues.value == Array(0...1_000))
    }

    /// One sequence iterated from two tasks at once: each state goes to one
    /// of them, in order within each, and both end at stop (no waiter is
    /// forgotten).
    @Test func oneSequenceSharedByTwoTasksHandsOutEachStateOnce() async throws {
        let loop = try Spin(initialState: 0, feedbacks: [], reducer: counterReducer).start()
        let stream = loop.states()
        let consumers = (0..<2).map { _ in
            Task { () -> [Int] in
                var values: [Int] = []
                for await value in stream { values.append(value) }
                return values
            }
        }
        for _ in 0..<2_000 { loop.emit(.increment) }
        await loop.stop()
        var all: [Int] = []
        for consumer in consumers {
            let values = await consumer.value
            #expect(values == values.sorted())
            all += values
        }
        #expect(all.sorted() == Array(0...2_000))
    }
}
