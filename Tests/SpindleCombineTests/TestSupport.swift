#if SpindleCombine || canImport(Combine)
#if canImport(Combine)
import Combine
#else
import OpenCombine
#endif
import Dispatch
import Foundation
import Spindle
import SpindleTestSupport

/// Runs `body` on `queue` and returns its result, without blocking a Swift
/// concurrency thread.
func on<T: Sendable>(_ queue: DispatchQueue, _ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { (continuation: CheckedContinuation<T, Never>) in
        queue.async { continuation.resume(returning: body()) }
    }
}

/// A private serial queue and a key that tells whether code runs on it.
func markedQueue(_ label: String) -> (DispatchQueue, DispatchSpecificKey<Int>) {
    let queue = DispatchQueue(label: label)
    let key = DispatchSpecificKey<Int>()
    queue.setSpecific(key: key, value: 1)
    return (queue, key)
}

/// Cancellables kept by a test, from any thread.
final class Bag: @unchecked Sendable {
    // @unchecked: `AnyCancellable` is not marked Sendable; the array is only
    // touched under the lock, and `cancel()` is thread-safe.
    private let storage = Locked<[AnyCancellable]>([])
    func keep(_ cancellable: AnyCancellable) { storage.withLock { $0.append(cancellable) } }
    func cancelAll() {
        let all = storage.withLock { all -> [AnyCancellable] in
            defer { all.removeAll() }
            return all
        }
        for cancellable in all { cancellable.cancel() }
    }
}

/// A publisher the test sends through by hand, which ignores cancellation:
/// it keeps every subscriber and goes on sending to it after a cancel (so
/// discarding late events is the bridge's and the engine's job). It records
/// how many subscriptions were made and cancelled.
final class StubbornPublisher<Output: Sendable>: Publisher, @unchecked Sendable {
    // @unchecked: the subscribers are only touched under the lock; a test
    // calls `send` from one task at a time.
    typealias Failure = Never

    private let subscribers = Locked<[AnySubscriber<Output, Never>]>([])
    let subscribed = Recorder<Int>()
    let cancelled = Recorder<Int>()

    func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Never {
        let index = subscribers.withLock { list -> Int in
            list.append(AnySubscriber(subscriber))
            return list.count - 1
        }
        subscribed.append(index)
        subscriber.receive(subscription: StubbornSubscription(onCancel: { [cancelled] in cancelled.append(index) }))
    }

    /// Sends `value` to every subscriber ever made, cancelled or not.
    func send(_ value: Output) {
        for subscriber in subscribers.withLock({ $0 }) { _ = subscriber.receive(value) }
    }
}

private final class StubbornSubscription: Subscription, @unchecked Sendable {
    // @unchecked: `onCancel` is immutable and Sendable.
    let onCancel: @Sendable () -> Void
    init(onCancel: @escaping @Sendable () -> Void) { self.onCancel = onCancel }
    func request(_ demand: Subscribers.Demand) {}
    func cancel() { onCancel() }
}
#endif
