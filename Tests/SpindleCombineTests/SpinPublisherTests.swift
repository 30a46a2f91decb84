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

@Suite struct SpinPublisherTests {
    @Test func streamFromASpinStartsTheLoopOnSubscriptionAndSendsEveryState() async {
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
        #expect(await eventually { received.count == 21 })
        #expect(gear.attachedCount == 1)
        // A later state is a marker: states are sent in order, so once it
        // is in, nothing more can come before it.
        gear.propagate(100)
        #expect(await eventually { received.values.last == 120 })
        #expect(received.values == Array(0...20) + [120])
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
        #expect(received.values == Array(0...20))
    }

    /// A subscriber whose demand lags while the loop runs 10,000 states
    /// holds at most the policy's number of them, and still gets the latest.
    @Test(arguments: [SpinStates<Int>.BufferingPolicy.standard, .bufferingNewest(8)])
    func aSubscriberWhoseDemandLagsHoldsABoundedBufferAndGetsTheLatest(policy: SpinStates<Int>.BufferingPolicy) async {
        let total = 10_000
        let reduced = Counter()
        let spin = Spin<Int, Int>(initialState: 0) {
            Feedback(effect: { (state: Int) -> Int? in state < total ? 1 : nil })
            Reducer { state, event in
                reduced.add()
                return state + event
            }
        }
        let received = Recorder<Int>()
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
            receiveCompletion: { _ in })
        AnyPublisher.stream(from: spin, bufferingPolicy: policy).subscribe(subscriber)
        #expect(await eventually { received.count == 1 && reduced.current == total })
        subscription.withLock { $0 }?.request(.unlimited)
        #expect(await eventually { received.values.last == total })
        let limit = policy == .standard ? 4096 : 8
        // The initial state, then at most `limit` buffered (and one more the
        // sender held while it waited for demand).
        #expect(received.count <= limit + 2, "received \(received.count) states")
        #expect(received.values == received.values.sorted())
        subscription.withLock { $0 }?.cancel()
    }

    @Test func statesWaitForDemand() async {
        // Each value is checked against the demand requested so far when it
        // arrives, rather than by looking for an extra value after a pause:
        // a value sent without demand is recorded whenever it comes.
        let received = Recorder<Int>()
        let requested = Locked(0)
        let unrequested = Recorder<Int>()
        let subscription = Locked<(any Subscription)?>(nil)
        let subscriber = AnySubscriber<Int, Never>(
            receiveSubscription: { sub in
                subscription.withLock { $0 = sub }
                requested.withLock { $0 = 3 }
                sub.request(.max(3))
            },
            receiveValue: { value in
                if received.count >= requested.withLock({ $0 }) { unrequested.append(value) }
                received.append(value)
                return .none
            },
            receiveCompletion: { _ in })
        AnyPublisher.stream(from: counterSpin()).subscribe(subscriber)
        #expect(await eventually { received.count == 3 })
        #expect(received.values == [0, 1, 2])
        requested.withLock { $0 += 2 }
        subscription.withLock { $0 }?.request(.max(2))
        #expect(await eventually { received.count == 5 })
        #expect(received.values == [0, 1, 2, 3, 4])
        #expect(unrequested.values.isEmpty, "sent without demand: \(unrequested.values)")
        requested.withLock { $0 = .max }
        subscription.withLock { $0 }?.request(.unlimited)
        #expect(await eventually { received.count == 21 })
        #expect(received.values == Array(0...20))
        subscription.withLock { $0 }?.cancel()
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
        #expect(first.values == Array(0...20))
        #expect(second.values == Array(0...20))
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
    private final class StopSignal: SpinObserver, @unchecked Sendable {
        // @unchecked: the OpenOnce is Sendable; nothing else is stored.
        typealias State = Int
        typealias Event = Int
        let stopped = OpenOnce()
        func loopStopped(_ report: StopReport) { stopped.open() }
    }

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
#endif
