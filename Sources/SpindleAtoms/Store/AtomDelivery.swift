internal import Atomics

/// Something an operation queued for after the exclusion: a value for a
/// watcher, an event for an observer. Delivered one at a time, in order.
///
/// Not generic: queueing a watcher's value boxes it as `any Sendable`
/// (in place for a value of up to three words: no allocation), which
/// needs only the value's type; a generic delivery type would make the
/// runtime look up its metadata and conformance on every change.
enum AtomDelivery {
    case watcher(AnyAtomWatcher, any Sendable)
    case observer(ObserverDelivery)

    func deliver() {
        switch self {
        case .watcher(let watcher, let value): watcher.deliver(value)
        case .observer(let delivery): delivery.deliver()
        }
    }
}

/// A watcher, whatever its value's type.
///
/// `@unchecked Sendable`: abstract; the one subclass, `AtomWatcher`, is
/// immutable but for an atomic.
class AnyAtomWatcher: @unchecked Sendable {
    /// Atomic: set by any thread, read by the delivering one.
    final let cancelled = ManagedAtomic<Bool>(false)

    /// Calls the callback with `value`, of the watcher's value type.
    func deliver(_ value: any Sendable) { fatalError("abstract") }

    final func cancel() {
        cancelled.store(true, ordering: .releasing)
    }
}

/// A watcher's callback and whether it was cancelled.
///
/// **Thread safety:** `deliver` runs on the delivering thread; `cancel`
/// from any thread.
final class AtomWatcher<Value: Sendable>: AnyAtomWatcher, @unchecked Sendable {
    private let onUpdate: @Sendable (Value) -> Void

    init(onUpdate: @escaping @Sendable (Value) -> Void) {
        self.onUpdate = onUpdate
    }

    override func deliver(_ value: any Sendable) {
        // The node queued a Value: the cast cannot fail.
        if !cancelled.load(ordering: .acquiring) { onUpdate(value as! Value) }
    }
}

/// An event for one observer.
struct ObserverDelivery {
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
