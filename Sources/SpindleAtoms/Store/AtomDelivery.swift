internal import Atomics

/// Something an operation queued for after the exclusion: a value for a
/// watcher, an event for an observer. Delivered one at a time, in order.
protocol AtomDelivery {
    func deliver()
}

/// A watcher's callback and whether it was cancelled.
///
/// **Thread safety:** `deliver` runs on the delivering thread; `cancel`
/// from any thread.
final class AtomWatcher<Value: Sendable>: Sendable {
    private let onUpdate: @Sendable (Value) -> Void
    /// Atomic: set by any thread, read by the delivering one.
    private let cancelled = ManagedAtomic<Bool>(false)

    init(onUpdate: @escaping @Sendable (Value) -> Void) {
        self.onUpdate = onUpdate
    }

    func deliver(_ value: Value) {
        if !cancelled.load(ordering: .acquiring) { onUpdate(value) }
    }

    func cancel() {
        cancelled.store(true, ordering: .releasing)
    }
}

/// A new value for one watcher. Small values fit the existential's inline
/// buffer, so queueing one allocates nothing.
struct WatcherDelivery<Value: Sendable>: AtomDelivery {
    let watcher: AtomWatcher<Value>
    let value: Value

    func deliver() { watcher.deliver(value) }
}

/// An event for one observer.
struct ObserverDelivery: AtomDelivery {
    enum Event {
        case assigned(AtomDescription)
        case changed(AtomDescription, AtomSnapshot)
        case released(AtomDescription)
        case failed(AtomError)
    }

    let observer: any AtomObserver
    let event: Event

    func deliver() {
        switch event {
        case .assigned(let atom): observer.atomAssigned(atom)
        case .changed(let atom, let snapshot): observer.atomChanged(atom, snapshot: snapshot)
        case .released(let atom): observer.atomReleased(atom)
        case .failed(let error): observer.atomFailed(error)
        }
    }
}
