#if canImport(Combine)
import Combine
#else
import OpenCombine
#endif
import Spindle

/// The publisher behind `AnyPublisher.stream(from:options:bufferingPolicy:)`: a
/// loop per subscription, behind a reduction gate that the subscriber's
/// demand opens (Spin.Swift's back-pressure: the loop runs no further ahead
/// than the subscriber asked).
struct SpinPublisher<State: Sendable, Event: Sendable>: Publisher {
    typealias Output = State
    typealias Failure = Never

    let spin: Spin<State, Event>
    let options: SpinOptions
    let bufferingPolicy: SpinStates<State>.BufferingPolicy

    func receive<S: Subscriber>(subscriber: S) where S.Input == State, S.Failure == Never {
        let subscription = SpinSubscription<State>(subscriber: AnySubscriber(subscriber), limit: bufferingPolicy.limit)
        // The subscriber's first request (usually made here) opens the
        // gate before the loop exists: its first slice may reduce at once.
        subscriber.receive(subscription: subscription)
        let loop = SpinLoop(spin: spin, options: options, gate: subscription.gate)
        subscription.start(loop)
    }
}

/// One subscription of a ``SpinPublisher``: the subscriber, its demand, and
/// the gate that mirrors it (open while the demand is above zero).
///
/// The loop's runner hands each reduced state to ``deliver(_:)``, which
/// calls the subscriber there and then, on the loop's executor, before the
/// next event is reduced: a subscriber that cancels in `receive(_:)` stops
/// the loop before another state reaches its feedbacks. States a subscriber
/// has no demand for come only from a stopping loop's drain (the gate holds
/// every other reduction back); they wait, at most `limit` (the newest), and
/// go out as demand comes, then the completion.
///
/// `@unchecked Sendable`: the subscriber (not `Sendable`) is called by one
/// thread at a time (`delivering`, under the lock), never under the lock;
/// every stored property is behind the lock or `Sendable`.
final class SpinSubscription<State: Sendable>: Subscription, @unchecked Sendable {
    typealias Downstream = AnySubscriber<State, Never>

    private struct Storage {
        var subscriber: Downstream?
        var demand: Subscribers.Demand = .none
        /// States reduced beyond the demand (only a stopping loop's drain:
        /// rare and short, so an array).
        var waiting: [State] = []
        /// A thread is calling the subscriber: others queue in `waiting`.
        var delivering = false
        /// The loop finished: complete once `waiting` is delivered.
        var finishing = false
        var wake: (@Sendable () -> Void)?
        var stop: (@Sendable () -> Void)?
        var cancelled = false
    }

    // protected by lock
    private let storage: Lock<Storage>
    private let limit: Int
    /// The loop's reduction gate: open exactly while the demand is above
    /// zero (written under the lock, with the demand).
    let gate: ReductionGate<State>

    init(subscriber: Downstream, limit: Int) {
        storage = Lock(Storage(subscriber: subscriber))
        self.limit = limit
        // Weak: the loop holds the gate, and must not keep a subscription
        // its subscriber let go of (whose deinit stops the loop).
        let owner = WeakSubscription<State>()
        gate = ReductionGate(
            deliver: { state in owner.subscription?.deliver(state) },
            finished: { owner.subscription?.finish() })
        owner.subscription = self
    }

    deinit {
        // Nobody can cancel it any more: the loop has no one to serve.
        storage.withLock { $0.stop }?()
    }

    /// Keeps `loop`, to wake it on demand and stop it on cancel; stops it at
    /// once if the subscription was already cancelled, and completes the
    /// subscriber if the loop could not start. The stop discards: as a
    /// Combine cancel tears a chain down at once, no state reaches the
    /// loop's feedbacks after `cancel()` returns (bar an effect call already
    /// in progress) and its pending events are dropped. The loop finishes in
    /// the background.
    func start<Event: Sendable>(_ loop: SpinLoop<State, Event>) {
        let stopNow = storage.withLock { storage -> Bool in
            if storage.cancelled { return true }
            storage.stop = { loop.requestStop(.discardPending) }
            storage.wake = { loop.wakeForGate() }
            return false
        }
        if stopNow { loop.requestStop(.discardPending) }
        if loop.startError != nil { finish() }
    }

    /// Adds `demand`. A request for no states, which Combine calls a
    /// misuse, adds nothing and ends nothing (the process never dies on a
    /// caller's input).
    func request(_ demand: Subscribers.Demand) {
        guard demand > .none else { return }
        let (wake, drains) = storage.withLock { storage -> ((@Sendable () -> Void)?, Bool) in
            guard !storage.cancelled else { return (nil, false) }
            storage.demand += demand
            gate.open()
            let drains = !storage.delivering && (!storage.waiting.isEmpty || storage.finishing)
            if drains { storage.delivering = true }
            return (storage.wake, drains)
        }
        // After the gate's store: the Dekker pair with the runner's idle
        // re-check.
        wake?()
        if drains { deliverWaiting(more: .none) }
    }

    func cancel() {
        let stop = storage.withLock { storage in
            // Closed at once: the loop may run before `start` gives this
            // subscription its stop (a subscriber that cancels in its
            // first `receive`), and must reduce nothing more meanwhile.
            gate.close()
            storage.cancelled = true
            storage.subscriber = nil
            storage.waiting.removeAll()
            defer {
                storage.stop = nil
                storage.wake = nil
            }
            return storage.stop
        }
        stop?()
    }

    /// The runner: the state of a reduction, sent now if the subscriber has
    /// demand for it and no other state waits; queued otherwise.
    private func deliver(_ state: State) {
        let subscriber = storage.withLock { storage -> Downstream? in
            guard !storage.cancelled, storage.subscriber != nil else { return nil }
            guard !storage.delivering, storage.waiting.isEmpty, storage.demand > .none else {
                storage.waiting.append(state)
                if storage.waiting.count > limit { storage.waiting.removeFirst() }
                return nil
            }
            take(&storage)
            storage.delivering = true
            return storage.subscriber
        }
        guard let subscriber else { return }
        deliverWaiting(more: subscriber.receive(state))
    }

    /// Counts one state sent; closes the gate when that was the last
    /// demand. Under the lock.
    private func take(_ storage: inout Storage) {
        storage.demand -= 1
        if storage.demand == .none { gate.close() }
    }

    /// The thread that holds `delivering`: adds the demand the last
    /// `receive` returned, sends what waits while there is demand, then
    /// lets `delivering` go (completing the subscriber if the loop finished
    /// and nothing waits).
    private enum Next { case send(Downstream, State), complete(Downstream), done }

    private func deliverWaiting(more: Subscribers.Demand) {
        var more = more
        while true {
            let next = storage.withLock { storage -> Next in
                if storage.cancelled {
                    storage.delivering = false
                    return .done
                }
                if more > .none {
                    storage.demand += more
                    gate.open()
                    more = .none
                }
                if storage.demand > .none, !storage.waiting.isEmpty, let subscriber = storage.subscriber {
                    let state = storage.waiting.removeFirst()
                    take(&storage)
                    return .send(subscriber, state)
                }
                storage.delivering = false
                if storage.finishing, storage.waiting.isEmpty, let subscriber = storage.subscriber {
                    storage.subscriber = nil
                    return .complete(subscriber)
                }
                return .done
            }
            switch next {
            case .send(let subscriber, let state): more = subscriber.receive(state)
            case .complete(let subscriber): return subscriber.receive(completion: .finished)
            case .done: return
            }
        }
    }

    /// The loop finished, some other way than `cancel` (after a cancel,
    /// nothing is sent): the subscriber completes once the states that wait
    /// are sent.
    private func finish() {
        let subscriber = storage.withLock { storage -> Downstream? in
            guard !storage.cancelled else { return nil }
            storage.finishing = true
            guard !storage.delivering, storage.waiting.isEmpty else { return nil }
            defer { storage.subscriber = nil }
            return storage.subscriber
        }
        subscriber?.receive(completion: .finished)
    }
}

/// The gate's way back to its subscription, weak (see `SpinSubscription.init`).
///
/// `@unchecked Sendable`: `subscription` is written once, in the
/// subscription's `init`, before the gate that reads it reaches another
/// thread (the loop is made after); it is only read after that.
private final class WeakSubscription<State: Sendable>: @unchecked Sendable {
    weak var subscription: SpinSubscription<State>?
}
