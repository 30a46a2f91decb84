import Synchronization

/// Something an operation queued for after the exclusion: a value for a
/// watcher, an event for an observer. Delivered one at a time, in order.
///
/// A watcher's value waits in the watcher, typed (see `AtomWatcher`):
/// the delivery only names the watcher, so queueing one neither boxes nor
/// casts the value, and asks the runtime for no metadata.
@usableFromInline
enum AtomDelivery {
    /// The watcher's next value. Uncounted: the watcher's node holds it
    /// until a later `release` delivery (a batch holds no counted
    /// reference, so queueing, going through and clearing it retain and
    /// release nothing).
    case watcher(Unmanaged<AnyAtomWatcher>)
    /// The node's reference to a watcher it no longer has (removed, or
    /// the node released), given back after every delivery queued before
    /// it, which may still name the watcher.
    case release(Unmanaged<AnyAtomWatcher>)
    indirect case observer(ObserverDelivery)

    /// Delivers; once per delivery (a `release` gives its reference back).
    func deliver() {
        switch self {
        case .watcher(let watcher):
            watcher._withUnsafeGuaranteedRef { $0.deliverNext() }
        case .release(let watcher):
            watcher.release()
        case .observer(let delivery):
            delivery.deliver()
        }
    }

    /// Under the store's exclusion, by the thread taking the batch to
    /// deliver: the watcher hands its queued values over to its delivery.
    func take() {
        if case .watcher(let watcher) = self { watcher._withUnsafeGuaranteedRef { $0.takeQueued() } }
    }
}

/// A watcher, whatever its value's type.
///
/// `@unchecked Sendable`: the one subclass, `AtomWatcher`, guards its
/// mutable state as it says.
@usableFromInline
class AnyAtomWatcher: @unchecked Sendable {
    /// Atomic: set by any thread, read by the delivering one. In the
    /// object, not a separate one: a delivery reads it for every value.
    final let cancelled = Atomic<Bool>(false)

    /// Hands the values queued so far to the delivery (see `AtomWatcher`).
    func takeQueued() { fatalError("abstract") }

    /// Calls the callback with the next value handed to the delivery.
    func deliverNext() { fatalError("abstract") }

    final func cancel() {
        cancelled.store(true, ordering: .releasing)
    }
}

/// A watcher's callback, whether it was cancelled, and its values on their
/// way to it.
///
/// A value goes through two lists. An operation queues it in `queued`
/// (under the store's exclusion) with a delivery naming the watcher in the
/// store's outbox; the thread that takes the outbox to deliver it moves
/// each of its watchers' queued values to `delivering` (under the
/// exclusion too), and then, outside it, calls the callback with them in
/// order, one per delivery. Only the thread holding the store's delivering
/// role touches `delivering` (the role passes under the exclusion).
///
/// The lists are raw buffers, not arrays: this code is not specialized, and
/// each array operation on `[Value]` would ask the runtime for the array's
/// metadata. `@exclusivity(unchecked)`: each list is touched by one thread
/// at a time, as said.
///
/// **Thread safety:** as above; `cancel` from any thread.
@usableFromInline
final class AtomWatcher<Value: Sendable>: AnyAtomWatcher, @unchecked Sendable {
    private let onUpdate: @Sendable (Value) -> Void
    /// Guarded by the store's exclusion: `queued[0..<queuedCount]` are
    /// initialized.
    @usableFromInline @exclusivity(unchecked) var queued: UnsafeMutablePointer<Value>?
    @usableFromInline @exclusivity(unchecked) var queuedCount = 0
    @usableFromInline @exclusivity(unchecked) var queuedCapacity = 0
    /// The delivering thread's: `delivering[next..<deliveringCount]` wait
    /// to be delivered (those before were moved out).
    @usableFromInline @exclusivity(unchecked) var delivering: UnsafeMutablePointer<Value>?
    @usableFromInline @exclusivity(unchecked) var deliveringCount = 0
    @usableFromInline @exclusivity(unchecked) var deliveringCapacity = 0
    @exclusivity(unchecked) private var next = 0

    init(onUpdate: @escaping @Sendable (Value) -> Void) {
        self.onUpdate = onUpdate
    }

    deinit {
        if let queued {
            queued.deinitialize(count: queuedCount)
            queued.deallocate()
        }
        if let delivering {
            (delivering + next).deinitialize(count: deliveringCount - next)
            delivering.deallocate()
        }
    }

    /// Under the store's exclusion: `value` waits for its delivery, which
    /// the caller queues.
    @inlinable
    func enqueue(_ value: Value) {
        if queuedCount == queuedCapacity {
            if delivering == nil {
                // The first value: both buffers at once, so that a watcher
                // in steady use allocates nothing when they trade places.
                deliveringCapacity = 4
                delivering = .allocate(capacity: deliveringCapacity)
            }
            queuedCapacity = Swift.max(queuedCapacity * 2, 4)
            queued = Self.moved(queued, count: queuedCount, toCapacity: queuedCapacity)
        }
        (queued.unsafelyUnwrapped + queuedCount).initialize(to: value)
        queuedCount &+= 1
    }

    override func takeQueued() {
        if queuedCount == 0 { return }
        if next == deliveringCount {
            // All delivered: the buffers trade places, each keeping its capacity.
            (queued, delivering) = (delivering, queued)
            (queuedCapacity, deliveringCapacity) = (deliveringCapacity, queuedCapacity)
            deliveringCount = queuedCount
            queuedCount = 0
            next = 0
        } else {
            let total = deliveringCount + queuedCount
            if total > deliveringCapacity {
                deliveringCapacity = Swift.max(total, deliveringCapacity * 2)
                delivering = Self.moved(delivering, count: deliveringCount, toCapacity: deliveringCapacity)
            }
            (delivering.unsafelyUnwrapped + deliveringCount).moveInitialize(from: queued.unsafelyUnwrapped, count: queuedCount)
            deliveringCount = total
            queuedCount = 0
        }
    }

    override func deliverNext() {
        let value = (delivering.unsafelyUnwrapped + next).move()
        next &+= 1
        if !cancelled.load(ordering: .acquiring) { onUpdate(value) }
    }

    /// A buffer of `capacity` with the `count` first elements of `old`
    /// moved in; `old` is freed.
    @usableFromInline
    static func moved(
        _ old: UnsafeMutablePointer<Value>?, count: Int, toCapacity capacity: Int
    ) -> UnsafeMutablePointer<Value> {
        let new = UnsafeMutablePointer<Value>.allocate(capacity: capacity)
        if let old {
            new.moveInitialize(from: old, count: count)
            old.deallocate()
        }
        return new
    }
}

/// An event for one observer.
@usableFromInline
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
