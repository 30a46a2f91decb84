
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

    /// Sends `event` to every attached loop.
    public func propagate(_ event: Event) {
        let list = subscribers.withLock { $0.list }
        for subscriber in list {
            subscriber.receive(event)
        }
    }

    /// Number of loops attached right now (for tests and diagnostics).
    public var attachedCount: Int {
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
