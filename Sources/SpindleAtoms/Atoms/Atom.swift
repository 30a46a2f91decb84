/// A keyed piece of state that any part of a program can read or watch
/// through an ``AtomStore``: the Atomic Architecture's atom.
///
/// You do not conform to `Atom` directly: conform to one of its kinds —
/// ``ValueAtom``, ``StateAtom``, ``TaskAtom``, ``ThrowingTaskAtom``,
/// ``AsyncSequenceAtom`` or ``SpinAtom`` — which provide the ``producer``.
///
/// An atom is identified by its type and its ``key``. A `Hashable` atom is
/// its own key (each distinct value is a distinct atom, so one type can take
/// parameters); any other atom names a key explicitly.
///
/// **Thread safety:** atoms are values; the store that holds their state is
/// safe to use from any thread.
public protocol Atom<Produced>: Sendable {
    /// What tells two atoms of the same type apart.
    associatedtype Key: Hashable & Sendable
    /// The value the atom holds in a store.
    associatedtype Produced: Sendable

    /// The atom's key: atoms of the same type and key share one value in a store.
    var key: Key { get }

    /// How the store makes and keeps the atom's value; given by the atom kinds.
    var producer: AtomProducer<Produced> { get }
}

extension Atom where Self: Hashable, Key == Self {
    /// A `Hashable` atom is its own key.
    public var key: Self { self }
}

/// Marks an atom whose value the store keeps once made, even when nothing
/// watches it (a cache, a session, a loop that must outlive its screens).
///
/// Without it an atom is released when its last watcher goes: its
/// terminations run, its task is cancelled, its loop stops.
public protocol KeepAlive {}

/// What identifies an atom in a store: its type, its key, and the scope
/// whose override it is (0: the store's own atom).
///
/// Sendable by construction: the key inside is an ``Atom/Key``, which is
/// `Sendable`; `AnyHashable` (not itself `Sendable`) only wraps it.
struct AtomKey: Hashable, @unchecked Sendable {
    let type: ObjectIdentifier
    let key: AnyHashable
    let scope: UInt64

    init<A: Atom>(_ atom: A, scope: UInt64 = 0) {
        type = ObjectIdentifier(A.self)
        key = AnyHashable(atom.key)
        self.scope = scope
    }

    /// The same atom, in whatever scope.
    func isSameAtom(as other: AtomKey) -> Bool {
        type == other.type && key == other.key
    }
}
