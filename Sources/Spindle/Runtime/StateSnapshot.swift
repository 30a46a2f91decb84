import Atomics

/// One published state.
///
/// `@unchecked Sendable` because `state` is a `var`: the reducer thread
/// writes it only while the box is uniquely referenced (not published, held
/// by no reader — see `StateSnapshot.publish`); once published the box is
/// only read.
final class StateBox<State>: AtomicReference, @unchecked Sendable {
    var state: State
    init(_ state: State) { self.state = state }
}

/// The latest state, readable from any thread without a lock.
///
/// The reducer thread publishes a box with an atomic exchange (swift-atomics'
/// lock-free `AtomicReference`, double-wide CAS); readers load it with
/// acquire ordering. A box that no reader holds any more is recycled, so
/// publishing allocates nothing in steady state.
///
/// Thread safety: `value` from any thread; `publish` on the reducer thread only.
final class StateSnapshot<State: Sendable>: Sendable {
    private let current: ManagedAtomic<StateBox<State>>
    // reducer thread only: the box replaced by the last publish, for reuse.
    nonisolated(unsafe) private var spare: StateBox<State>?

    init(_ initial: State) {
        current = ManagedAtomic(StateBox(initial))
    }

    /// The latest published state. Any thread.
    var value: State { current.load(ordering: .acquiring).state }

    /// Publishes `state`. Reducer thread only.
    func publish(_ state: State) {
        var box: StateBox<State>? = nil
        swap(&box, &spare)
        if box != nil, isKnownUniquelyReferenced(&box) {
            box.unsafelyUnwrapped.state = state
        } else {
            box = StateBox(state)
        }
        spare = current.exchange(box.unsafelyUnwrapped, ordering: .acquiringAndReleasing)
    }
}
