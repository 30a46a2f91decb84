/// The values of every atom a store held at one moment: for observers,
/// debugging and time travel (``AtomStore/restore(_:)``).
///
/// **Thread safety:** a value; use it anywhere.
public struct AtomSnapshot: Sendable {
    struct Entry: Sendable {
        let description: String
        let value: (any Sendable)?
        let isRestorable: Bool
    }

    let entries: [AtomKey: Entry]

    /// The value `atom` had, or nil if the store did not hold it: the
    /// store's own atom, not a scope's override of it.
    public func value<A: Atom>(of atom: A) -> A.Produced? {
        entries[AtomKey(atom)]?.value as? A.Produced
    }

    /// The atoms the store held, described.
    public var atoms: [String] { entries.values.map(\.description).sorted() }

    /// How many atoms the store held.
    public var count: Int { entries.count }
}
