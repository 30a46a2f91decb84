#if canImport(Observation)
public import Observation
internal import Spindle

/// An atom's value as an `Observable` object: SwiftUI views (and any
/// `withObservationTracking` user) that read ``value`` are invalidated when
/// it changes, and only then — an equal value does not propagate in the
/// store, so it does not invalidate either.
///
/// Made by ``AtomStore/observable(_:)``; it watches the atom while it lives.
///
/// @Snippet(path: "Spindle/Snippets/SpindleAtoms/AtomsGettingStarted", slice: "observation")
///
/// **Thread safety:** ``value`` may be read from any thread. A change is
/// published on the store's delivering thread: trackers' `onChange` runs
/// there (SwiftUI takes it to the main actor itself).
public final class ObservableAtom<Value: Sendable>: Observable, Sendable {
    private let registrar = ObservationRegistrar()
    private let box: Box
    private let subscription: AtomSubscription<Value>

    /// The value, read from the store's latest update. Reading it inside
    /// `withObservationTracking` tracks it.
    public var value: Value {
        registrar.access(self, keyPath: \.value)
        return box.current.withLock { $0! }
    }

    init<A: Atom>(store: AtomStore, atom: A) throws(AtomError) where A.Produced == Value {
        let box = Box()
        let subscription = try store.watch(atom) { value in box.publish(value) }
        // A value delivered already (another thread's update) is newer.
        box.current.withLock { if $0 == nil { $0 = subscription.initialValue } }
        self.subscription = subscription
        self.box = box
        box.owner.withLock { $0 = Weak(self) }
    }

    private func publish(_ value: Value) {
        registrar.withMutation(of: self, keyPath: \.value) {
            box.current.withLock { $0 = value }
        }
    }

    /// What the watch's callback reaches: the value and, weakly, the object.
    private final class Box: Sendable {
        let current = Lock<Value?>(nil)
        let owner = Lock<Weak>(Weak(nil))

        func publish(_ value: Value) {
            if let owner = owner.withLock({ $0.object }) {
                owner.publish(value)
            } else {
                current.withLock { $0 = value }
            }
        }
    }

    private struct Weak: Sendable {
        weak var object: ObservableAtom?
        init(_ object: ObservableAtom?) { self.object = object }
    }
}

extension AtomStore {
    /// `atom`'s value as an `Observable` object, watching the atom while it lives.
    /// - Throws: ``AtomError/cycle(path:)``, ``AtomError/storeClosed``.
    public func observable<A: Atom>(_ atom: A) throws(AtomError) -> ObservableAtom<A.Produced> {
        try ObservableAtom(store: self, atom: atom)
    }
}
#endif
