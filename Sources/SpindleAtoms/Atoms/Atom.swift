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
/// The key's hash is taken once, when the key is made. Two keys of the same
/// atom type hold the same ``Atom/Key`` type, so comparing them compares
/// the two keys as that type, with no dynamic cast (`AnyHashable` casts
/// one key to the other's type at each comparison).
struct AtomKey: Hashable, Sendable {
    let type: ObjectIdentifier
    let key: any Hashable & Sendable
    let keyHash: Int
    let scope: UInt64

    init<A: Atom>(_ atom: A, scope: UInt64 = 0) {
        type = ObjectIdentifier(A.self)
        let key = atom.key
        self.key = key
        keyHash = key.hashValue
        self.scope = scope
    }

    static func == (lhs: AtomKey, rhs: AtomKey) -> Bool {
        lhs.scope == rhs.scope && lhs.isSameAtom(as: rhs)
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(type)
        hasher.combine(keyHash)
        hasher.combine(scope)
    }

    /// The hash the store's dictionary uses (`Hashable`'s customization
    /// point for it): the key was hashed by `Hasher` once, when the
    /// `AtomKey` was made; here it is only mixed with the type, the scope
    /// and the dictionary's seed, so that a set's lookup does not run
    /// the hasher again. The mix is a bijection of `keyHash` for a given
    /// type, scope and seed, and `keyHash` is already spread by `Hasher`.
    func _rawHashValue(seed: Int) -> Int {
        var mixed = UInt64(UInt(bitPattern: keyHash))
        mixed ^= UInt64(UInt(bitPattern: type)) &* 0x9E37_79B9_7F4A_7C15
        mixed ^= scope &* 0xC2B2_AE3D_27D4_EB4F
        mixed ^= UInt64(UInt(bitPattern: seed))
        // MurmurHash3's 64-bit finalizer: every input bit reaches every
        // output bit, low ones included (the dictionary indexes by them).
        mixed ^= mixed >> 33
        mixed &*= 0xFF51_AFD7_ED55_8CCD
        mixed ^= mixed >> 33
        mixed &*= 0xC4CE_B9FE_1A85_EC53
        mixed ^= mixed >> 33
        return Int(truncatingIfNeeded: mixed)
    }

    /// The same atom, in whatever scope.
    func isSameAtom(as other: AtomKey) -> Bool {
        type == other.type && keyHash == other.keyHash && keysEqual(key, other.key)
    }
}

/// Whether two atom keys are equal: `false` for keys of different types.
private func keysEqual<Key: Hashable>(_ lhs: Key, _ rhs: any Hashable & Sendable) -> Bool {
    func compare<Other: Hashable>(_ rhs: Other) -> Bool {
        guard Other.self == Key.self else { return false }
        // The same type, checked above: read `rhs` as a `Key`.
        return withUnsafePointer(to: rhs) { $0.withMemoryRebound(to: Key.self, capacity: 1) { $0.pointee == lhs } }
    }
    return compare(rhs)
}
