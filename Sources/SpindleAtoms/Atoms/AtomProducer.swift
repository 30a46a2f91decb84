/// How a store makes an atom's value, and what it does when the value is
/// replaced or released. Each atom kind builds one; it is not made by users.
public struct AtomProducer<Value: Sendable>: Sendable {
    // The node keeps these apart, in its first cache lines, in the order
    // a recomputation reads them; `recompute` it resolves once, when it is
    // made.
    /// Makes the value: called under the store's exclusion, with a context
    /// that records what the atom watches. The context comes in place
    /// (`inout`, never written): the store lends it without counting its
    /// node, so a kind that keeps it past the computation (a task's body)
    /// takes a copy, which counts the node.
    @usableFromInline let compute: @Sendable (inout AtomTransactionContext) throws(AtomError) -> Value
    /// `==` for an `Equatable` value, made where the atom's type is known
    /// (the kinds' `producer`s are inlinable, so it is specialized in the
    /// atom's module); nil: the store finds out by itself, more slowly.
    @usableFromInline let isEqual: (@Sendable (Value, Value) -> Bool)?
    /// The recomputation of a node of the atom type it names, specialized
    /// for that type (made in the atom's module; see `NodeRecompute`); nil:
    /// the store's own, compiled once for every type.
    @usableFromInline let recompute: NodeRecompute?
    /// Ends what a value holds (cancels a task, stops a loop) when the value
    /// is replaced by a recomputation or the atom is released; called
    /// outside the store's exclusion.
    @usableFromInline let end: (@Sendable (Value) -> Void)?
    /// Whether the value is a source that ``AtomStore/restore(_:)`` writes
    /// back (a state atom's); derived values are recomputed instead.
    @usableFromInline let isRestorable: Bool

    /// Package access: SpindleCombine's publisher atom is a kind too.
    @usableFromInline
    package init(
        isRestorable: Bool = false,
        isEqual: (@Sendable (Value, Value) -> Bool)? = nil,
        compute: @escaping @Sendable (inout AtomTransactionContext) throws(AtomError) -> Value,
        end: (@Sendable (Value) -> Void)? = nil,
        recompute: NodeRecompute? = nil
    ) {
        self.recompute = recompute
        self.isRestorable = isRestorable
        self.isEqual = isEqual
        self.compute = compute
        self.end = end
    }
}

/// A node's recomputation specialized for one atom type: made by an
/// `@inlinable` producer, so that in the atom's module the computation's
/// value is copied, compared and queued as its own type, without the
/// runtime's value witnesses. A node uses it only if it is a node of
/// `atomType` (an atom may hand out another type's producer).
///
/// Package access: it is a parameter of the producer's package initializer.
@usableFromInline
package struct NodeRecompute: Sendable {
    @usableFromInline let atomType: ObjectIdentifier
    @usableFromInline let body: @Sendable (AnyAtomNode, AtomGraph) throws(AtomError) -> Bool

    @inlinable
    init<A: Atom>(for _: A.Type) {
        atomType = ObjectIdentifier(A.self)
        body = { node, graph throws(AtomError) in
            try unsafeDowncast(node, to: NodeOf<A>.self).recomputeValue(in: graph)
        }
    }
}
