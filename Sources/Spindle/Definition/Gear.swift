
/// A gear connects spins: a feedback of one spin propagates events to the
/// gear, and feedbacks of other spins (attached to the same gear) turn them
/// into their own events.
///
/// Delivery is synchronous on the propagating thread: ``propagate(_:)``
/// emits into every attached, running loop before it returns, so events one
/// thread propagates reach each loop in the order propagated. Nothing is
/// promised across threads.
///
/// Thread safety: any method, any thread.
public final class Gear<Event: Sendable>: Sendable {
    private struct Subscriber: Sendable {
        let id: UInt64
        let receive: @Sendable (Event) -> Void
    }

    // protected by lock: the attached loops' receivers, and the next id.
    private let subscribers = Lock<(list: [Subscriber], nextID: UInt64)>(([], 0))

    /// Creates a gear with no attached loops.
    public init() {}

    /// The gear's events as an `AsyncSequence` (Spin.Swift's `eventStream`):
    /// every event propagated after this call, in the order each thread
    /// propagated them, until the stream is dropped or its task cancelled.
    ///
    /// Each call subscribes anew. `propagate(_:)` only appends to the
    /// stream's buffer, so a slow reader never slows the propagating thread;
    /// with `.unbounded` (the default) the buffer grows while the reader
    /// lags, with `.bufferingNewest(n)` it keeps the newest `n`.
    ///
    /// @Snippet(path: "Spindle/Snippets/Spindle/Gears", slice: "events")
    ///
    /// - Parameter bufferingPolicy: what the stream keeps while its reader lags.
    /// - Returns: a stream of the events propagated from now on.
    public func events(
        bufferingPolicy: AsyncStream<Event>.Continuation.BufferingPolicy = .unbounded
    ) -> AsyncStream<Event> {
        let (stream, continuation) = AsyncStream<Event>.makeStream(bufferingPolicy: bufferingPolicy)
        let subscription = subscribe { event in continuation.yield(event) }
        continuation.onTermination = { _ in subscription.cancel() }
        return stream
    }

    /// Sends `event` to every attached loop.
    public func propagate(_ event: Event) {
        let list = subscribers.withLock { $0.list }
        for subscriber in list {
            subscriber.receive(event)
        }
    }

    /// Number of loops attached right now. For tests and diagnostics only
    /// (`@_spi(Testing) import Spindle`): a snapshot that may be stale by the
    /// time it is read.
    @_spi(Testing) public var attachedCount: Int {
        subscribers.withLock { $0.list.count }
    }

    func subscribe(_ receive: @escaping @Sendable (Event) -> Void) -> AttachedSubscription {
        let id = subscribers.withLock { state -> UInt64 in
            let id = state.nextID
            state.nextID += 1
            state.list.append(Subscriber(id: id, receive: receive))
            return id
        }
        return AttachedSubscription { [weak self] in
            self?.subscribers.withLock { $0.list.removeAll { $0.id == id } }
        }
    }
}
