/// An atom with a default value that can be set, modified and reset.
///
/// @Snippet(path: "Spindle/Snippets/SpindleAtoms/AtomsGettingStarted", slice: "state")
public protocol StateAtom: Atom where Produced == Value {
    associatedtype Value: Sendable
    typealias Context = AtomTransactionContext

    /// The value before any set (and after a reset). It may watch other
    /// atoms: when one changes, the value goes back to a new default.
    func defaultValue(context: Context) throws(AtomError) -> Value
}

extension StateAtom {
    @inlinable
    public var producer: AtomProducer<Value> {
        AtomProducer(isRestorable: true) { context throws(AtomError) in try self.defaultValue(context: context) }
    }
}

extension StateAtom where Value: Equatable {
    @inlinable
    public var producer: AtomProducer<Value> {
        AtomProducer(isRestorable: true, isEqual: { $0 == $1 }) { context throws(AtomError) in
            try self.defaultValue(context: context)
        }
    }
}
