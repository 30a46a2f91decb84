/// A value that replaces an atom's own: dependency injection for tests and
/// previews. An override is given to a store when it is made
/// (``AtomStore/init(overrides:observers:logger:)``) or to a test context.
///
/// An override of one atom (by type and key) wins over an override of its
/// type. The override replaces the atom's computation: a task atom's
/// overriding task is still cancelled on release, but an async-sequence
/// atom's override iterates nothing and a spin atom's override is a state
/// with no loop behind it (an emit to it answers `.stopped`).
public struct AtomOverride: Sendable {
    enum Target: Hashable, Sendable {
        case atom(AtomKey)
        case type(ObjectIdentifier)
    }

    let target: Target
    /// A `@Sendable (A) -> A.Produced`, typed by the atom it overrides.
    let value: any Sendable

    /// Overrides one atom: the store's value for it is `value(atom)`.
    public init<A: Atom>(_ atom: A, with value: @escaping @Sendable (A) -> A.Produced) {
        target = .atom(AtomKey(atom))
        self.value = value
    }

    /// Overrides every atom of type `type`, whatever its key.
    public init<A: Atom>(_ type: A.Type, with value: @escaping @Sendable (A) -> A.Produced) {
        target = .type(ObjectIdentifier(type))
        self.value = value
    }
}

/// The overrides a store was made with, found by atom or type.
struct AtomOverrides: Sendable {
    private var byTarget: [AtomOverride.Target: any Sendable] = [:]

    init(_ overrides: [AtomOverride]) {
        for override in overrides { byTarget[override.target] = override.value }
    }

    var isEmpty: Bool { byTarget.isEmpty }

    mutating func add(_ override: AtomOverride) {
        byTarget[override.target] = override.value
    }

    /// These overrides, then `inner`'s over them.
    func merging(_ inner: AtomOverrides) -> AtomOverrides {
        var merged = self
        merged.byTarget.merge(inner.byTarget) { _, inner in inner }
        return merged
    }

    /// Whether `atom` is overridden.
    func contains<A: Atom>(_ atom: A) -> Bool {
        overridingValue(for: atom) != nil
    }

    /// The override of `atom`, by atom first, then by type.
    private func overridingValue<A: Atom>(for atom: A) -> (any Sendable)? {
        if byTarget.isEmpty { return nil }
        return byTarget[.atom(AtomKey(atom))] ?? byTarget[.type(ObjectIdentifier(A.self))]
    }

    /// The producer of `atom`'s overriding value, if it is overridden.
    func producer<A: Atom>(for atom: A) -> AtomProducer<A.Produced>? {
        guard let value = overridingValue(for: atom) as? @Sendable (A) -> A.Produced else { return nil }
        let own = atom.producer
        return AtomProducer(
            isRestorable: own.isRestorable, isEqual: own.isEqual, compute: { _ in value(atom) }, end: own.end)
    }
}

/// A scope's overrides and the number that keeps its atoms apart from the
/// store's (see ``AtomStore/scoped(overriding:)``).
struct AtomScope: Sendable {
    let id: UInt64
    let overrides: AtomOverrides

    func producer<A: Atom>(for atom: A) -> AtomProducer<A.Produced>? {
        overrides.producer(for: atom)
    }

    func overrides<A: Atom>(_ atom: A) -> Bool {
        overrides.contains(atom)
    }
}
