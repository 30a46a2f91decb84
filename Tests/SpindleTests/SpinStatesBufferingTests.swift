@testable import Spindle
import Testing
import SpindleTestSupport

/// `SpinLoop.states(bufferingPolicy:)`: a lagging consumer keeps at most the
/// newest states, always reaches the latest and the final one, and reads
/// what it gets in reduction order.
@Suite struct SpinStatesBufferingTests {
    /// Three subscriptions made together on one loop, none read while 1,000
    /// events are reduced: the unbounded one holds every state, `.latest`
    /// only the newest, `.bufferingNewest(3)` the newest three. (All three
    /// get each batch in one delivery, so once the unbounded one holds all
    /// 1,001 states, the others have had them too.)
    @Test(arguments: allExecutors)
    func aLaggingConsumerKeepsOnlyTheNewestStates(executor: ExecutorKind) async throws {
        try await executor.withExecutor { executor in
            let count = 1_000
            let loop = try startCounter(on: executor)
            let every = loop.states(bufferingPolicy: .unbounded)
            let latest = loop.states(bufferingPolicy: .latest)
            let three = loop.states(bufferingPolicy: .bufferingNewest(3))
            // Joined: each has had the state current when it joined.
            #expect(await eventually { every.bufferedCount >= 1 })
            for _ in 0..<count { loop.emit(.increment) }
            #expect(await eventually { every.bufferedCount == count + 1 }, "the unbounded subscription has every state")
            #expect(latest.bufferedCount == 1)
            #expect(three.bufferedCount == 3)

            var latestIterator = latest.makeAsyncIterator()
            #expect(await latestIterator.next() == count)
            var threeIterator = three.makeAsyncIterator()
            var newest: [Int] = []
            for _ in 0..<3 { if let state = await threeIterator.next() { newest.append(state) } }
            #expect(newest == [count - 2, count - 1, count])

            await loop.stop()
            #expect(await latestIterator.next() == nil, "the final state was already taken; then the end")
            #expect(await threeIterator.next() == nil)
        }
    }

    /// The default policy is bounded: a subscription whose consumer does
    /// not read holds at most 4,096 states however far the loop runs, and
    /// still gets the latest.
    @Test func theDefaultSubscriptionHoldsABoundedBuffer() async throws {
        let count = 10_000
        let loop = try Spin(initialState: 0, feedbacks: [], reducer: counterReducer).start()
        let states = loop.states()
        #expect(await eventually { states.bufferedCount >= 1 })
        for _ in 0..<count { loop.emit(.increment) }
        #expect(await eventually { loop.state == count })
        #expect(await eventually { states.bufferedCount == 4096 })
        var iterator = states.makeAsyncIterator()
        var read: [Int] = []
        while let state = await iterator.next() {
            read.append(state)
            if state == count { break }
        }
        #expect(read == Array((count - 4095)...count))
        await loop.stop()
    }

    /// A consumer slower than the loop: with `.latest` it reads states in
    /// increasing order, with gaps, and its last state is the final one;
    /// never more than one state waits for it.
    @Test func aSlowConsumerReadsInOrderAndEndsOnTheFinalState() async throws {
        let count = 20_000
        let loop = try Spin(initialState: 0, feedbacks: [], reducer: counterReducer).start()
        let states = loop.states(bufferingPolicy: .latest)
        let consumer = Task {
            var seen: [Int] = []
            var mostWaiting = 0
            for await state in states {
                seen.append(state)
                mostWaiting = max(mostWaiting, states.bufferedCount)
                await Task.yield()
            }
            return (seen, mostWaiting)
        }
        for _ in 0..<count { loop.emit(.increment) }
        await loop.stop()
        let (seen, mostWaiting) = await consumer.value
        #expect(seen.last == count, "the final state is always delivered")
        #expect(zip(seen, seen.dropFirst()).allSatisfy { $0 < $1 }, "states in reduction order")
        #expect(mostWaiting <= 1)
    }

    /// A limit below 1 counts as 1: the consumer still gets the latest state.
    @Test func aLimitBelowOneCountsAsOne() async throws {
        let loop = try Spin(initialState: 0, feedbacks: [], reducer: counterReducer).start()
        let every = loop.states()
        let none = loop.states(bufferingPolicy: .bufferingNewest(0))
        #expect(await eventually { every.bufferedCount >= 1 })
        for _ in 0..<10 { loop.emit(.increment) }
        #expect(await eventually { every.bufferedCount == 11 })
        #expect(none.bufferedCount == 1)
        var iterator = none.makeAsyncIterator()
        #expect(await iterator.next() == 10)
        await loop.stop()
        #expect(await iterator.next() == nil)
    }

    /// A `.latest` subscriber alone (the runner collects no states for it:
    /// it is given each batch's last state), subscribed while the loop is
    /// busy: it begins from the state of the moment it joined, reads in
    /// order, and ends on the final state; the loop's own state is exact.
    @Test(arguments: allExecutors)
    func aLatestSubscriberAloneJoiningABusyLoopEndsOnTheFinalState(executor: ExecutorKind) async throws {
        try await executor.withExecutor { executor in
            let count = 50_000
            let loop = try startCounter(on: executor)
            for _ in 0..<(count / 2) { loop.emit(.increment) }
            let states = loop.states(bufferingPolicy: .latest)
            let consumer = Task {
                var seen: [Int] = []
                for await state in states { seen.append(state) }
                return seen
            }
            for _ in 0..<(count / 2) { loop.emit(.increment) }
            await loop.stop()
            let seen = await consumer.value
            #expect(seen.last == count, "the final state is always delivered")
            #expect(zip(seen, seen.dropFirst()).allSatisfy { $0 < $1 }, "states in reduction order")
            #expect(loop.state == count)
        }
    }
}

/// A counting loop on `executor`.
private func startCounter(on executor: SpinExecutor) throws -> SpinLoop<Int, CounterEvent> {
    try Spin(initialState: 0, feedbacks: [], reducer: counterReducer).start(options: SpinOptions(executor: executor))
}
