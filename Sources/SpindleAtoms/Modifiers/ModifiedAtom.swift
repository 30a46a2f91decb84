/// An atom made from another by a modifier: ``Atom/select(_:)``,
/// ``Atom/changes`` or ``TaskAtom/phase``. Its key is the base atom's key
/// and the modifier's, so the same modification of the same atom is one
/// atom in a store.
public struct ModifiedAtom<Base: Atom, Modifier: AtomModifier>: Atom where Modifier.BaseValue == Base.Produced {
    public struct Key: Hashable, Sendable {
        let base: Base.Key
        let modifier: Modifier.Key
    }

    /// The atom modified.
    public let base: Base
    /// The modification.
    public let modifier: Modifier

    public var key: Key { Key(base: base.key, modifier: modifier.key) }

    public var producer: AtomProducer<Modifier.Value> {
        AtomProducer { context throws(AtomError) in
            let value = try context.watch(base)
            return try modifier.modify(value, context: context)
        }
    }
}

extension ModifiedAtom: CustomStringConvertible {
    public var description: String { "\(base).\(modifier)" }
}

/// A modification of an atom's value (``Atom/select(_:)``, ``Atom/changes``,
/// ``TaskAtom/phase``); made by the modifiers, not by users.
public protocol AtomModifier: Sendable {
    associatedtype Key: Hashable & Sendable
    associatedtype BaseValue: Sendable
    associatedtype Value: Sendable

    /// Tells this modification apart from others of its type.
    var key: Key { get }

    /// The modified value of `value`, computed in the modified atom's
    /// computation.
    func modify(_ value: BaseValue, context: AtomTransactionContext) throws(AtomError) -> Value
}
