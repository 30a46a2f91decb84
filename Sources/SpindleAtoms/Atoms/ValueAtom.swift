/// An atom whose value is computed from its context: a constant, or a
/// value derived from the atoms it watches, computed again when one of
/// them changes.
///
/// @Snippet(path: "Spindle/Snippets/SpindleAtoms/AtomsGettingStarted", slice: "derived")
public protocol ValueAtom: Atom where Produced == Value {
    associatedtype Value: Sendable
    typealias Context = AtomTransactionContext

    /// Computes the value. Runs inside the store's exclusion: keep it pure
    /// and quick (as a reducer).
    func value(context: Context) throws(AtomError) -> Value
}

extension ValueAtom {
    @inlinable
    public var producer: AtomProducer<Value> {
        AtomProducer(
            compute: { context throws(AtomError) in try self.value(context: context) },
            recompute: NodeRecompute(for: Self.self))
    }
}

extension ValueAtom where Value: Equatable {
    @inlinable
    public var producer: AtomProducer<Value> {
        AtomProducer(
            isEqual: { $0 == $1 },
            compute: { context throws(AtomError) in try self.value(context: context) },
            recompute: NodeRecompute(for: Self.self))
    }
}
