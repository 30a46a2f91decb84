#if canImport(Combine)
import Combine
#else
import OpenCombine
#endif
import Spindle

/// The publisher behind `AnyPublisher.stream(from:options:bufferingPolicy:)`: a
/// loop per subscription.
struct SpinPublisher<State: Sendable, Event: Sendable>: Publisher {
    typealias Output = State
    typealias Failure = Never

    let spin: Spin<State, Event>
    let options: SpinOptions
    let bufferingPolicy: SpinStates<State>.BufferingPolicy

    func receive<S: Subscriber>(subscriber: S) where S.Input == State, S.Failure == Never {
        let subscription = SpinSubscription(subscriber: AnySubscriber(subscriber))
        subscriber.receive(subscription: subscription)
        // The states are sent by a stream-form feedback of the loop's own, so
        // they start with the initial state however fast the loop runs (a
        // loop's `states` starts from whatever state is current).
        let sending = Feedback<State, Event>(streamEffect: { (states: AsyncStream<State>) in
            Draining<Event> {
                var sent = 0
                for await state in states {
                    guard await subscription.send(state) else { return }
                    // A busy loop's states are always buffered, so this
                    // task would never suspend: let the concurrency
                    // runtime's other tasks run now and then.
                    sent &+= 1
                    if sent & 63 == 0 { await Task.yield() }
                }
                subscription.finish()
            }
        }, bufferingPolicy: bufferingPolicy)
        // Its observers stay: the spin may be observed.
        let withSending = spin.addingFeedback(sending)
        // A loop that cannot start is stopped from birth, its failure logged.
        subscription.start(SpinLoop(spin: withSending, options: options))
    }
}

/// An `AsyncSequence` that runs `body` on its first `next()` and then ends,
/// with no element: a stream-form feedback that only reads its states.
struct Draining<Element: Sendable>: AsyncSequence, Sendable {
    typealias Failure = Never

    let body: @Sendable () async -> Void

    func makeAsyncIterator() -> Iterator { Iterator(body: body) }

    struct Iterator: AsyncIteratorProtocol {
        var body: (@Sendable () async -> Void)?

        mutating func next() async -> Element? {
            if let body {
                self.body = nil
                await body()
            }
            return nil
        }
    }
}

/// One subscription of a ``SpinPublisher``: its loop, and the demand that
/// the loop's sending feedback waits for.
///
/// The subscriber is type-erased so that the sending feedback captures no
/// metatype that is not `Sendable`.
///
/// `@unchecked Sendable`: the subscriber (not `Sendable`) is called only by
/// the sending feedback's one run, one call at a time, after
/// `receive(subscription:)` has returned; it is stored and released under the lock. Everything else is
/// behind the lock or `Sendable`.
final class SpinSubscription<State: Sendable>: Subscription, @unchecked Sendable {
    typealias Downstream = AnySubscriber<State, Never>

    private struct Storage {
        var subscriber: Downstream?
        var demand: Subscribers.Demand = .none
        /// The sending feedback waits here while there is no demand.
        var waiter: CheckedContinuation<Void, Never>?
        var stop: (@Sendable () -> Void)?
        var cancelled = false
    }

    // protected by lock
    private let storage: Lock<Storage>

    init(subscriber: Downstream) {
        storage = Lock(Storage(subscriber: subscriber))
    }

    /// Keeps `loop`, to stop it on cancel; stops it at once if the
    /// subscription was already cancelled. The stop discards: as a Combine
    /// cancel tears a chain down at once, no state reaches the loop's
    /// feedbacks after `cancel()` returns (bar an effect call already in
    /// progress) and its pending events are dropped. The loop finishes in
    /// the background.
    func start<Event: Sendable>(_ loop: SpinLoop<State, Event>) {
        let stopNow = storage.withLock { storage -> Bool in
            if storage.cancelled { return true }
            storage.stop = { loop.requestStop(.discardPending) }
            return false
        }
        if stopNow { loop.requestStop(.discardPending) }
    }

    func request(_ demand: Subscribers.Demand) {
        let waiter = storage.withLock { storage -> CheckedContinuation<Void, Never>? in
            guard !storage.cancelled else { return nil }
            storage.demand += demand
            defer { storage.waiter = nil }
            return storage.waiter
        }
        waiter?.resume()
    }

    func cancel() {
        let (waiter, stop) = storage.withLock { storage in
            storage.cancelled = true
            storage.subscriber = nil
            defer {
                storage.waiter = nil
                storage.stop = nil
            }
            return (storage.waiter, storage.stop)
        }
        waiter?.resume()
        stop?()
    }

    // The sending feedback: waits for demand, then sends `state`. False once
    // cancelled.
    func send(_ state: State) async -> Bool {
        while true {
            let (subscriber, mustWait) = storage.withLock { storage -> (Downstream?, Bool) in
                if storage.cancelled { return (nil, false) }
                guard storage.demand > .none else { return (nil, true) }
                storage.demand -= 1
                return (storage.subscriber, false)
            }
            if mustWait {
                await waitForDemand()
                continue
            }
            guard let subscriber else { return false }
            let more = subscriber.receive(state)
            if more > .none {
                storage.withLock { storage in
                    if !storage.cancelled { storage.demand += more }
                }
            }
            return true
        }
    }

    // The sending feedback: returns once there is demand or the subscription is
    // cancelled (`request` and `cancel` resume it).
    private func waitForDemand() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = storage.withLock { storage -> Bool in
                if storage.cancelled || storage.demand > .none { return true }
                storage.waiter = continuation
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    // The sending feedback: the loop stopped, some other way than `cancel`
    // (after a cancel, nothing is sent).
    func finish() {
        let subscriber = storage.withLock { storage -> Downstream? in
            defer { storage.subscriber = nil }
            return storage.cancelled ? nil : storage.subscriber
        }
        subscriber?.receive(completion: .finished)
    }
}
