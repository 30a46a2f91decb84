#if canImport(Combine)
import Combine
#else
import OpenCombine
#endif
import Spindle

/// A Combine subscription's cancellable, shared with the code that ends it.
///
/// `@unchecked Sendable`: `AnyCancellable` is not marked `Sendable`, but its
/// `cancel()` is thread-safe (Combine's and OpenCombine's subscriptions lock
/// their state), and the box only stores and cancels it under its own lock.
final class SubscriptionBox: @unchecked Sendable {
    private struct Storage {
        var cancellable: AnyCancellable?
        var cancelled = false
    }

    // protected by lock
    private let storage = Lock(Storage())

    /// Keeps `cancellable`, or cancels it at once if ``cancel()`` came first.
    func keep(_ cancellable: AnyCancellable) {
        let cancelNow = storage.withLock { storage -> Bool in
            if storage.cancelled { return true }
            storage.cancellable = cancellable
            return false
        }
        if cancelNow { cancellable.cancel() }
    }

    /// Cancels the subscription (now, or as soon as it is kept). Any thread.
    func cancel() {
        let cancellable = storage.withLock { storage -> AnyCancellable? in
            storage.cancelled = true
            defer { storage.cancellable = nil }
            return storage.cancellable
        }
        cancellable?.cancel()
    }
}

/// The values of a publisher as an `AsyncStream`: it subscribes at once,
/// with unlimited demand, buffers what arrives until the stream is read, and
/// finishes when the publisher completes. When the stream terminates (its
/// reader's task is cancelled, or the reader goes away) the subscription is
/// cancelled.
///
/// This is how a publisher effect becomes a run of the engine's
/// `AsyncSequence` form, so a run's cancellation (and the discarding of its
/// late events) is the engine's, unchanged.
func asyncValues<Value: Sendable>(
    of publisher: AnyPublisher<Value, Never>,
    onTermination: @escaping @Sendable () -> Void = {}
) -> AsyncStream<Value> {
    AsyncStream(bufferingPolicy: .unbounded) { continuation in
        let subscription = SubscriptionBox()
        // Set before subscribing, so a reader that is already gone cancels
        // the subscription as soon as it is kept.
        continuation.onTermination = { _ in
            subscription.cancel()
            onTermination()
        }
        subscription.keep(
            publisher.sink(
                receiveCompletion: { _ in continuation.finish() },
                receiveValue: { continuation.yield($0) }))
    }
}
