internal import Atomics

/// One published state, in raw storage.
///
/// Not generic on purpose: publishing runs in the engine's unspecialized
/// generic code, where every use of a `StateBox<State>` (and of a
/// `ManagedAtomic<StateBox<State>>`) asks the runtime's metadata cache for the
/// constructed type, once per batch; a concrete class costs nothing.
///
/// `@unchecked Sendable` because `storage` is mutable memory: the reducer
/// thread writes it only while the box is uniquely referenced (not published,
/// held by no reader — see `StateSnapshot.publish`); once published the box
/// is only read.
final class StateBox: AtomicReference, @unchecked Sendable {
    /// One initialized `State`, owned by the box.
    let storage: UnsafeMutableRawPointer
    /// The type of the value in `storage`: deinit opens it to destroy the
    /// value. A metatype, not a closure: a closure over `State` would cost
    /// a context allocation per box (one per loop started).
    private let stateType: Any.Type

    init<State>(_ state: State) {
        let typed = UnsafeMutablePointer<State>.allocate(capacity: 1)
        typed.initialize(to: state)
        storage = UnsafeMutableRawPointer(typed)
        stateType = State.self
    }

    deinit { Self.destroy(stateType, storage) }

    private static func destroy<State>(_ type: State.Type, _ raw: UnsafeMutableRawPointer) {
        let typed = raw.assumingMemoryBound(to: State.self)
        typed.deinitialize(count: 1)
        typed.deallocate()
    }
}

/// The latest state, readable from any thread without a lock.
///
/// The reducer thread publishes a box with an atomic exchange (swift-atomics'
/// lock-free `AtomicReference`, double-wide CAS); readers load it with
/// acquire ordering. A box that no reader holds any more is recycled, so
/// publishing allocates nothing in steady state.
///
/// Not generic, like `StateBox`: allocating an instance of a generic class
/// asks the runtime for its metadata (a hash-table lookup), once per loop
/// started; the state's type is a parameter of each method instead, and
/// every call for one snapshot must name the type its `init` was given.
///
/// Thread safety: `value` from any thread; `publish` on the reducer thread only.
final class StateSnapshot: Sendable {
    // The current box, as an atomic held in place: the first stored
    // property, reached only through `current` (its address, found as
    // swift-atomics' own `ManagedAtomic` finds its storage). A
    // `ManagedAtomic` would be an object of its own per loop, which a
    // server with a loop per connection pays per connection.
    nonisolated(unsafe) private var currentStorage: StateBox.AtomicRepresentation
    // reducer thread only: the box replaced by the last publish, for reuse.
    nonisolated(unsafe) private var spare: StateBox?

    @inline(__always)
    private var current: UnsafeAtomic<StateBox> {
        UnsafeAtomic(at: _getUnsafePointerToStoredProperties(self)
            .assumingMemoryBound(to: StateBox.AtomicRepresentation.self))
    }

    init<State>(_ initial: State) {
        currentStorage = StateBox.AtomicRepresentation(StateBox(initial))
    }

    deinit {
        _ = _getUnsafePointerToStoredProperties(self)
            .assumingMemoryBound(to: StateBox.AtomicRepresentation.self).pointee.dispose()
    }

    /// The latest published state. Any thread.
    func value<State>(as type: State.Type) -> State {
        let box = current.load(ordering: .acquiring)
        return withExtendedLifetime(box) { box.storage.assumingMemoryBound(to: State.self).pointee }
    }

    /// Publishes `state`. Reducer thread only.
    func publish<State>(_ state: State) {
        var box: StateBox? = nil
        swap(&box, &spare)
        if box != nil, isKnownUniquelyReferenced(&box) {
            box!.storage.assumingMemoryBound(to: State.self).pointee = state
        } else {
            box = StateBox(state)
        }
        spare = current.exchange(box!, ordering: .acquiringAndReleasing)
    }
}
