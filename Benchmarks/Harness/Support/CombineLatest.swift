#if !canImport(Combine) && canImport(OpenCombine)
import Foundation
import OpenCombine

// OpenCombine (0.14) has no `combineLatest`: its pull request #119 was never
// merged. The atoms scenarios' Combine yardstick needs it, so the harness
// carries one, written to Combine's documented behaviour: once both inputs
// have a value, every value from either input sends the pair of latest
// values; it finishes when both inputs have, fails when either does. Like
// Combine's and OpenCombine's own operators it is safe for inputs on
// different threads (one lock, no user code under it). On Apple platforms
// Combine's own is used.

extension Publishers {
    /// Combine's `Publishers.CombineLatest`, for OpenCombine.
    struct CombineLatest<A: Publisher, B: Publisher>: Publisher where A.Failure == B.Failure {
        typealias Output = (A.Output, B.Output)
        typealias Failure = A.Failure

        let a: A
        let b: B

        init(_ a: A, _ b: B) {
            self.a = a
            self.b = b
        }

        func receive<Downstream: Subscriber>(subscriber: Downstream)
        where Downstream.Input == Output, Downstream.Failure == Failure {
            let inner = CombineLatestInner<A.Output, B.Output, Failure, Downstream>(downstream: subscriber)
            subscriber.receive(subscription: inner)
            a.subscribe(CombineLatestSideA(inner: inner))
            b.subscribe(CombineLatestSideB(inner: inner))
        }
    }
}

extension Publisher {
    /// Combine's `combineLatest(_:)`, for OpenCombine.
    func combineLatest<Other: Publisher>(_ other: Other) -> Publishers.CombineLatest<Self, Other>
    where Other.Failure == Failure {
        Publishers.CombineLatest(self, other)
    }
}

/// Which input a value came from.
private enum CombineLatestInput {
    case a, b
}

/// Input `a`'s subscriber: forwards to the shared inner subscription.
private struct CombineLatestSideA<OutputA, OutputB, Failure: Error, Downstream: Subscriber>: Subscriber
where Downstream.Input == (OutputA, OutputB), Downstream.Failure == Failure {
    typealias Input = OutputA
    let inner: CombineLatestInner<OutputA, OutputB, Failure, Downstream>
    let combineIdentifier = CombineIdentifier()

    func receive(subscription: Subscription) { inner.attach(subscription, side: .a) }

    func receive(_ input: OutputA) -> Subscribers.Demand {
        inner.receiveA(input)
        return .none
    }

    func receive(completion: Subscribers.Completion<Failure>) { inner.complete(completion, side: .a) }
}

/// Input `b`'s subscriber: forwards to the shared inner subscription.
private struct CombineLatestSideB<OutputA, OutputB, Failure: Error, Downstream: Subscriber>: Subscriber
where Downstream.Input == (OutputA, OutputB), Downstream.Failure == Failure {
    typealias Input = OutputB
    let inner: CombineLatestInner<OutputA, OutputB, Failure, Downstream>
    let combineIdentifier = CombineIdentifier()

    func receive(subscription: Subscription) { inner.attach(subscription, side: .b) }

    func receive(_ input: OutputB) -> Subscribers.Demand {
        inner.receiveB(input)
        return .none
    }

    func receive(completion: Subscribers.Completion<Failure>) { inner.complete(completion, side: .b) }
}

/// The subscription the downstream holds: the latest value of each input,
/// the downstream's demand, and the inputs' subscriptions. Plain stored
/// properties and an explicit lock, as OpenCombine's own operators are
/// written: its generic code runs unspecialized, and a generic state struct
/// behind a closure would ask the runtime for its metadata on every value.
private final class CombineLatestInner<OutputA, OutputB, Failure: Error, Downstream: Subscriber>: Subscription
where Downstream.Input == (OutputA, OutputB), Downstream.Failure == Failure {
    // protected by `lock`; the downstream is called outside it.
    private var latestA: OutputA?
    private var latestB: OutputB?
    private var demand = Subscribers.Demand.none
    private var subscriptionA: Subscription?
    private var subscriptionB: Subscription?
    private var finishedA = false
    private var finishedB = false
    private var isDone = false
    private let lock = NSLock()
    private let downstream: Downstream
    let combineIdentifier = CombineIdentifier()

    init(downstream: Downstream) {
        self.downstream = downstream
    }

    func attach(_ subscription: Subscription, side: CombineLatestInput) {
        lock.lock()
        let accepted = !isDone
        if accepted {
            switch side {
            case .a: subscriptionA = subscription
            case .b: subscriptionB = subscription
            }
        }
        lock.unlock()
        if accepted { subscription.request(.unlimited) } else { subscription.cancel() }
    }

    func receiveA(_ value: OutputA) {
        lock.lock()
        guard !isDone else { return lock.unlock() }
        latestA = value
        sendIfReady()
    }

    func receiveB(_ value: OutputB) {
        lock.lock()
        guard !isDone else { return lock.unlock() }
        latestB = value
        sendIfReady()
    }

    /// With the lock held: sends the pair if both inputs have a value and
    /// the downstream asked for more; unlocks before sending.
    private func sendIfReady() {
        guard let a = latestA, let b = latestB, demand > 0 else { return lock.unlock() }
        demand -= 1
        lock.unlock()
        let more = downstream.receive((a, b))
        if more > 0 {
            lock.lock()
            demand += more
            lock.unlock()
        }
    }

    func complete(_ completion: Subscribers.Completion<Failure>, side: CombineLatestInput) {
        lock.lock()
        if isDone { return lock.unlock() }
        var other: Subscription?
        switch completion {
        case .failure:
            isDone = true
            other = side == .a ? subscriptionB : subscriptionA
        case .finished:
            if side == .a { finishedA = true } else { finishedB = true }
            isDone = finishedA && finishedB
        }
        let send = isDone
        lock.unlock()
        other?.cancel()
        if send { downstream.receive(completion: completion) }
    }

    func request(_ more: Subscribers.Demand) {
        lock.lock()
        demand += more
        lock.unlock()
    }

    func cancel() {
        lock.lock()
        isDone = true
        let subscriptions = [subscriptionA, subscriptionB]
        subscriptionA = nil
        subscriptionB = nil
        lock.unlock()
        for subscription in subscriptions { subscription?.cancel() }
    }
}
#endif
