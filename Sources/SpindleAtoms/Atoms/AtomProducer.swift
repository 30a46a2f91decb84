/// How a store makes an atom's value, and what it does when the value is
/// replaced or released. Each atom kind builds one; it is not made by users.
public struct AtomProducer<Value: Sendable>: Sendable {
    /// Makes the value: called under the store's exclusion, with a context
    /// that records what the atom watches.
    @usableFromInline let compute: @Sendable (AtomTransactionContext) throws(AtomError) -> Value
    /// Ends what a value holds (cancels a task, stops a loop) when the value
    /// is replaced by a recomputation or the atom is released; called
    /// outside the store's exclusion.
    @usableFromInline let end: (@Sendable (Value) -> Void)?
    /// Whether the value is a source that ``AtomStore/restore(_:)`` writes
    /// back (a state atom's); derived values are recomputed instead.
    @usableFromInline let isRestorable: Bool
    /// `==` for an `Equatable` value, made where the atom's type is known
    /// (the kinds' `producer`s are inlinable, so it is specialized in the
    /// atom's module); nil: the store finds out by itself, more slowly.
    @usableFromInline let isEqual: (@Sendable (Value, Value) -> Bool)?

    /// Package access: SpindleCombine's publisher atom is a kind too.
    @usableFromInline
    package init(
        isRestorable: Bool = false,
        isEqual: (@Sendable (Value, Value) -> Bool)? = nil,
        compute: @escaping @Sendable (AtomTransactionContext) throws(AtomError) -> Value,
        end: (@Sendable (Value) -> Void)? = nil
    ) {
        self.isRestorable = isRestorable
        self.isEqual = isEqual
        self.compute = compute
        self.end = end
    }
}
