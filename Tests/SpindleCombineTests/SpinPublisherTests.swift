#if SpindleCombine || canImport(Combine)
#if canImport(Combine)
import Combine
#else
import OpenCombine
#endif
import Dispatch
@_spi(Testing) @_spi(Benchmarks) @_spi(Tuning) import Spindle
import SpindleCombine
import Testing
import SpindleTestSupport

// Spin's start operators: AnyPublisher.stream(from:) and AnyPublisher.start(spin:).

/// Opens once its loop has stopped.
private final class StopSignal: SpinObserver, @unchecked Sendable {
    // @unchecked: the OpenOnce is Sendable; nothing else is stored.
    typealias State = Int
    typealias Event = Int
    let stopped = OpenOnce()
    func loopStopped(_ report: StopReport) { stopped.open() }
}

/// Counts up to 20 by itself; `seen` records every state its feedback sees,
/// and its gear feedback is attached while the loop runs.
private func counterSpin(seen: Recorder<Int> = Recorder(), gear: Gear<Int> = Gear()) -> Spin<Int, Int> {
    Spin<Int, Int>(initialState: 0) {
        Feedback(effect: { (state: Int) -> Int? in
            seen.append(state)
            return state < 20 ? 1 : nil
        })
        Feedback(attachedTo: gear, fromGear: { (value: Int) -> Int? in value })
        Reducer { state, event in state + event }
    }
}

/// A subscriber that checks each value against the demand requested so far
/// when it arrives, rather than by looking for an extra value after a
/// pause: a value sent without demand is recorded whenever it comes.
private final class DemandProbe: Sendable {
    let received = Recorder<Int>()
    let unrequested = Recorder<Int>()
    private let requested = Locked(0)
    private let subscription = Locked<(any Subscription)?>(nil)

    /// The subscriber, which requests `first` on subscription, in order.
    func subscriber(first: [Subscribers.Demand]) -> AnySubscriber<Int, Never> {
        AnySubscriber<Int, Never>(
            receiveSubscription: { [self] sub in
                subscription.withLock { $0 = sub }
                for demand in first { request(demand, on: sub) }
            },
            receiveValue: { [self] value in
                if received.count >= requested.withLock({ $0 }) { unrequested.append(value) }
                received.append(value)
                return .none
            },
            receiveCompletion: { _ in })
    }

    func request(_ demand: Subscribers.Demand) {
        guard let sub = subscription.withLock({ $0 }) else { return }
        request(demand, on: sub)
    }

    /// Counts `demand` before requesting it.
    private func request(_ demand: Subscribers.Demand, on sub: any Subscription) {
        requested.withLock { $0 = demand == .unlimited ? .max : $0 + (demand.max ?? 0) }
        sub.request(demand)
    }

    func cancel() { subscription.withLock { $0 }?.cancel() }
}

@Suite struct SpinPublisherTests {
    @Test func streamFromASpinStartsTheLoopOnSubscriptionAndSendsEveryReducedState() async {
        let seen = Recorder<Int>()
        let received = Recorder<Int>()
        let gear = Gear<Int>()
        // Making the publisher is synchronous and launches nothing: a loop
        // started here would be attached already, or would add a second
        // run of states to `seen` below.
        let publisher = AnyPublisher.stream(from: counterSpin(seen: seen, gear: gear))
        #expect(seen.values.isEmpty)  // nothing runs before a subscription
        #expect(gear.attachedCount == 0)

        let cancellable = publisher.sink { received.append($0) }
        #expect(await eventually { received.count == 20 })
        #expect(gear.attachedCount == 1)
        // A later state is a marker: states are sent in order, so once it
        // is in, nothing more can come before it.
        gear.propagate(100)
        #expect(await eventually { received.values.last == 120 })
        // Reduced states only, as Spin's stream: the feedbacks see the
        // initial state, the subscriber does not.
        #expect(received.values == Array(1...20) + [120])
        #expect(seen.values == Array(0...20) + [120])
        cancellable.cancel()
    }

    @Test func cancellingTheSubscriptionStopsTheLoopAndSendsNothingMore() async {
        let received = Recorder<Int>()
        let gear = Gear<Int>()
        let cancellable = AnyPublisher.stream(from: counterSpin(gear: gear)).sink { received.append($0) }
        #expect(await eventually { received.values.last == 20 })
        #expect(gear.attachedCount == 1)
        cancellable.cancel()
        #expect(await eventually { gear.attachedCount == 0 })  // the loop stopped
        // Its gear feedback is detached, so this reaches no loop: there is
        // no later state to send.
        gear.propagate(1)
        #expect(received.values.last == 20)
        #expect(received.values == Array(1...20))
    }

    /// Spin's back-pressure: the loop reduces an event only while the
    /// subscriber has demand, and hands each state to the subscriber before
    /// it reduces the next. Checked in the reducer, at every reduction,
    /// against the demand requested so far (counted before each request),
    /// and in the subscriber against the reductions made so far: a loop
    /// that ran ahead is caught whenever it does.
    @Test func theLoopRunsNoFurtherAheadThanTheSubscribersDemand() async {
        let requested = Locked(0)
        let reduced = Counter()
        let aheadOfDemand = Recorder<Int>()
        let aheadOfSubscriber = Recorder<Int>()
        let spin = Spin<Int, Int>(initialState: 0) {
            Feedback(effect: { (state: Int) -> Int? in state < 50 ? 1 : nil })
            Reducer { state, event in
                let count = reduced.add()
                if count > requested.withLock({ $0 }) { aheadOfDemand.append(count) }
                return state + event
            }
        }
        let received = Recorder<Int>()
        let subscription = Locked<(any Subscription)?>(nil)
        let subscriber = AnySubscriber<Int, Never>(
            receiveSubscription: { sub in
                subscription.withLock { $0 = sub }
                requested.withLock { $0 = 1 }
                sub.request(.max(1))
            },
            receiveValue: { value in
                // State n is the n-th reduction's: none after it yet.
                if reduced.current != value { aheadOfSubscriber.append(value) }
                received.append(value)
                return .none
            },
            receiveCompletion: { _ in })
        AnyPublisher.stream(from: spin).subscribe(subscriber)
        for step in 1..<10 {
            #expect(await eventually { received.count == step })
            requested.withLock { $0 += 1 }
            subscription.withLock { $0 }?.request(.max(1))
        }
        #expect(await eventually { received.count == 10 })
        requested.withLock { $0 = .max }
        subscription.withLock { $0 }?.request(.unlimited)
        #expect(await eventually { received.count == 50 })
        #expect(received.values == Array(1...50))
        #expect(aheadOfDemand.values.isEmpty, "reductions beyond the demand: \(aheadOfDemand.values)")
        #expect(aheadOfSubscriber.values.isEmpty, "states sent after a later reduction: \(aheadOfSubscriber.values)")
        subscription.withLock { $0 }?.cancel()
    }

    /// A stop that drains (here: the loop's pool shuts down) reduces every
    /// accepted event whatever the demand; the states beyond it wait, at
    /// most the policy's number (the newest), and go out with the
    /// completion once the subscriber asks.
    @Test func aDrainingStopKeepsTheNewestStatesForTheDemandToCome() async throws {
        let pool = try ReducerPool(threads: 1, name: "stream-drain")
        let gear = Gear<Int>()
        let received = Recorder<Int>()
        let completed = OpenOnce()
        let subscription = Locked<(any Subscription)?>(nil)
        let subscriber = AnySubscriber<Int, Never>(
            receiveSubscription: { sub in
                subscription.withLock { $0 = sub }
                sub.request(.max(1))
            },
            receiveValue: { value in
                received.append(value)
                return .none
            },
            receiveCompletion: { _ in completed.open() })
        let spin = Spin<Int, Int>(initialState: 0) {
            Feedback(attachedTo: gear, fromGear: { (value: Int) -> Int? in value })
            Reducer { state, event in state + event }
        }
        AnyPublisher.stream(from: spin, options: SpinOptions(executor: .pool(pool)), bufferingPolicy: .bufferingNewest(8))
            .subscribe(subscriber)
        #expect(await eventually { gear.attachedCount == 1 })
        for _ in 0..<100 { gear.propagate(1) }
        #expect(await eventually { received.count == 1 })
        try await pool.shutdown()
        // Shut down: the loop reduced all 100 and finished; 8 states wait.
        #expect(received.values == [1])
        subscription.withLock { $0 }?.request(.unlimited)
        await completed.wait()
        #expect(received.values == [1] + Array(93...100))
    }

    @Test func statesWaitForDemand() async {
        let probe = DemandProbe()
        AnyPublisher.stream(from: counterSpin()).subscribe(probe.subscriber(first: [.max(3)]))
        #expect(await eventually { probe.received.count == 3 })
        #expect(probe.received.values == [1, 2, 3])
        probe.request(.max(2))
        #expect(await eventually { probe.received.count == 5 })
        #expect(probe.received.values == [1, 2, 3, 4, 5])
        #expect(probe.unrequested.values.isEmpty, "sent without demand: \(probe.unrequested.values)")
        probe.request(.unlimited)
        #expect(await eventually { probe.received.count == 20 })
        #expect(probe.received.values == Array(1...20))
        probe.cancel()
    }

    /// Combine calls a request for no states a misuse: it adds no demand
    /// and ends nothing, and the subscription goes on.
    @Test func aRequestForNoStatesAddsNothing() async {
        let probe = DemandProbe()
        AnyPublisher.stream(from: counterSpin()).subscribe(probe.subscriber(first: [.none, .max(1)]))
        #expect(await eventually { probe.received.count == 1 })
        probe.request(.none)
        probe.request(.max(1))
        #expect(await eventually { probe.received.count == 2 })
        #expect(probe.received.values == [1, 2])
        #expect(probe.unrequested.values.isEmpty, "sent without demand: \(probe.unrequested.values)")
        probe.cancel()
    }

    @Test func eachSubscriptionRunsItsOwnLoop() async {
        let gear = Gear<Int>()
        let first = Recorder<Int>()
        let second = Recorder<Int>()
        let publisher = AnyPublisher.stream(from: counterSpin(gear: gear))
        let a = publisher.sink { first.append($0) }
        let b = publisher.sink { second.append($0) }
        #expect(await eventually { first.values.last == 20 && second.values.last == 20 })
        #expect(gear.attachedCount == 2)
        a.cancel()
        #expect(await eventually { gear.attachedCount == 1 })
        b.cancel()
        #expect(await eventually { gear.attachedCount == 0 })
        #expect(first.values == Array(1...20))
        #expect(second.values == Array(1...20))
    }

    @Test func startRunsTheLoopUntilCancelled() async {
        let seen = Recorder<Int>()
        let gear = Gear<Int>()
        let running = AnyPublisher.start(spin: counterSpin(seen: seen, gear: gear))
        #expect(await eventually { seen.values.last == 20 })
        #expect(gear.attachedCount == 1)
        gear.propagate(5)
        #expect(await eventually { seen.values.last == 25 })
        running.cancel()
        #expect(await eventually { gear.attachedCount == 0 })
    }

    @Test func releasingTheCancellableOfStartStopsTheLoop() async {
        let seen = Recorder<Int>()
        let gear = Gear<Int>()
        do {
            let running = AnyPublisher.start(spin: counterSpin(seen: seen, gear: gear))
            #expect(await eventually { seen.values.last == 20 })
            #expect(gear.attachedCount == 1)
            _ = running
        }
        #expect(await eventually { gear.attachedCount == 0 })
    }
}

/// Spin.Swift tears a stream down at once when its subscription is
/// cancelled; so does Spindle (ported from Spin's own test suite, where the
/// count of states after the cancel failed 9 times in 10 while the loop
/// drained in the background).
@Suite struct SpinPublisherCancelTests {
    @Test(arguments: [false, true])
    func cancellingAStreamSubscriptionEndsTheEffectsDeliveriesAtOnce(effectOnQueue: Bool) async {
        let calls = Counter()
        let afterCancel = Counter()
        let cancelled = Locked(false)
        let signal = StopSignal()
        let gear = Gear<Int>()
        // A renderer behind a backlog: its 100th call waits until the test
        // has cancelled, so thousands of states are still to be delivered
        // when the cancel comes, inline (a slice of up to 1,024) or in the
        // renderer queue's mailbox, however the machine schedules the test.
        let reached = OpenOnce()
        let release = DispatchSemaphore(value: 0)
        let render = Feedback<Int, Int>(effect: { (_: Int) in
            if calls.add() == 100 {
                reached.open()
                release.wait()
            }
            if cancelled.withLock({ $0 }) { afterCancel.add() }
        })
        let spin = Spin(
            initialState: 0,
            feedbacks: [
                effectOnQueue ? render.execute(on: DispatchQueue(label: "render")) : render,
                Feedback(attachedTo: gear, fromGear: { (value: Int) -> Int? in value }),
            ],
            reducer: Reducer<Int, Int> { $0 + $1 }
        ).observed(by: signal)
        // A dedicated thread: the renderer blocks its runner for a while.
        let subscription = AnyPublisher.stream(from: spin, options: SpinOptions(executor: .dedicatedThread))
            .sink { _ in }
        #expect(await eventually { gear.attachedCount == 1 })
        await onThreads(1) { _ in for _ in 0..<20_000 { gear.propagate(1) } }
        await reached.wait()
        subscription.cancel()
        // Set once cancel() has returned: a call that sees it started after
        // the cancel, or was already running then (at most one, the waiting
        // 100th: the next one finds the stop).
        cancelled.withLock { $0 = true }
        release.signal()
        await signal.stopped.wait()
        #expect(afterCancel.current <= 1)
        #expect(calls.current < 20_001)
    }
}
/// Spin.Swift's `stream(from:)` under its own operators, from Spin's
/// documented semantics (its stream is `scan` over the feedbacks' events,
/// with the feedbacks fed each state before the subscriber): reduced states
/// only, and a subscriber that ends the stream stops the loop where it ends
/// it.
@Suite struct SpinStreamSemanticsTests {
    /// Counts up without end; `seen` records the states its feedback sees.
    private func endlessCounter(seen: Recorder<Int>, signal: StopSignal) -> Spin<Int, Int> {
        Spin<Int, Int>(initialState: 0) {
            Feedback(effect: { (state: Int) -> Int? in
                seen.append(state)
                return 1
            })
            Reducer { state, event in state + event }
        }.observed(by: signal)
    }

    /// What a stream ended by an operator did: the states its feedback saw,
    /// the ones the stream delivered to the operator, and the ones that
    /// reached the subscriber. Returns once the loop has stopped.
    private func endedByOperator(
        _ ending: (AnyPublisher<Int, Never>) -> AnyPublisher<Int, Never>
    ) async -> (seen: [Int], delivered: [Int], received: [Int]) {
        let seen = Recorder<Int>()
        let delivered = Recorder<Int>()
        let received = Recorder<Int>()
        let signal = StopSignal()
        let done = OpenOnce()
        let stream = AnyPublisher.stream(from: endlessCounter(seen: seen, signal: signal))
            .handleEvents(receiveOutput: { delivered.append($0) })
            .eraseToAnyPublisher()
        let cancellable = ending(stream)
            .sink(receiveCompletion: { _ in done.open() }, receiveValue: { received.append($0) })
        await done.wait()
        await signal.stopped.wait()
        cancellable.cancel()
        return (seen.values, delivered.values, received.values)
    }

    /// `output(in: 0...5)` takes six states and cancels: the loop stops at
    /// the state whose delivery made the operator cancel (the sixth, or the
    /// seventh for an `Output` that learns of the range's end from the next
    /// element, as OpenCombine's does). Its feedback saw the initial state
    /// and exactly the states the stream delivered, each before the
    /// subscriber, as in Spin: nothing ran on after the cancel.
    @Test func outputInARangeStopsTheLoopWhereTheOperatorCancels() async {
        let run = await endedByOperator { $0.output(in: 0...5).eraseToAnyPublisher() }
        #expect(run.received == Array(1...6))
        #expect([6, 7].contains(run.delivered.count), "delivered \(run.delivered)")
        #expect(run.seen == [0] + run.delivered)
    }

    @Test func prefixStopsTheLoopWhereTheOperatorCancels() async {
        let run = await endedByOperator { $0.prefix(3).eraseToAnyPublisher() }
        #expect(run.received == [1, 2, 3])
        #expect([3, 4].contains(run.delivered.count), "delivered \(run.delivered)")
        #expect(run.seen == [0] + run.delivered)
    }

    /// `first()` gets the first reduced state, which exists only once a
    /// feedback answered the initial state: here one on a queue of its own
    /// (the initial state is not published, so the stream cannot end
    /// before that feedback ran).
    @Test func firstWaitsForTheFirstReducedState() async {
        let seen = Recorder<Int>()
        let signal = StopSignal()
        let received = Recorder<Int>()
        let done = OpenOnce()
        let spin = Spin<Int, Int>(initialState: 0) {
            Feedback(effect: { (state: Int) -> Int? in
                seen.append(state)
                return state == 0 ? 10 : nil
            }).execute(on: DispatchQueue(label: "first-feedback"))
            Reducer { state, event in state + event }
        }.observed(by: signal)
        let cancellable = AnyPublisher.stream(from: spin)
            .first()
            .sink(receiveCompletion: { _ in done.open() }, receiveValue: { received.append($0) })
        await done.wait()
        await signal.stopped.wait()
        #expect(received.values == [10])
        #expect(seen.values.first == 0)
        cancellable.cancel()
    }
}
#endif
