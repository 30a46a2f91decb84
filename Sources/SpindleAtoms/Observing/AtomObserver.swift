/// Hears what a store does with its atoms: each atom's first value, each
/// change (with a snapshot of the store after the update), each release,
/// and each failure the store reports (a cycle found while propagating).
///
/// Calls come after the store's exclusion is left, one at a time, in the
/// order of the updates, on the thread that delivers (see ``AtomStore``).
///
/// **Thread safety:** called from one thread at a time, not always the same one.
public protocol AtomObserver: Sendable {
    /// `atom` got its first value (it is in use from now on).
    func atomAssigned(_ atom: AtomDescription)
    /// `atom` changed; `snapshot` is the store after the update.
    func atomChanged(_ atom: AtomDescription, snapshot: AtomSnapshot)
    /// `atom` was released: nothing watches it and it is not kept alive.
    func atomReleased(_ atom: AtomDescription)
    /// The store failed to recompute an atom; the atom kept its value.
    func atomFailed(_ error: AtomError)
}

extension AtomObserver {
    public func atomAssigned(_ atom: AtomDescription) {}
    public func atomChanged(_ atom: AtomDescription, snapshot: AtomSnapshot) {}
    public func atomReleased(_ atom: AtomDescription) {}
    public func atomFailed(_ error: AtomError) {}
}

/// An atom as an observer or a snapshot names it: its identity in the
/// store and a readable description.
public struct AtomDescription: Sendable, Hashable, CustomStringConvertible {
    let key: AtomKey
    /// The atom, as `String(describing:)` prints it.
    public let description: String

    init(_ node: AnyAtomNode) {
        key = node.key
        description = node.atomDescription
    }

    /// Whether this describes `atom` (same type and key), the store's
    /// own or a scope's override of it.
    public func isDescribing<A: Atom>(_ atom: A) -> Bool {
        key.isSameAtom(as: AtomKey(atom))
    }

    /// Whether this is a scope's override of the atom (see
    /// ``AtomStore/scoped(overriding:)``), not the store's own.
    public var isScoped: Bool { key.scope != 0 }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.key == rhs.key }
    public func hash(into hasher: inout Hasher) { hasher.combine(key) }
}
