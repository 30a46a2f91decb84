extension Atom {
    /// The part of the atom's value at `keyPath`: watchers of the selection
    /// are told only when that part changes.
    ///
    /// @Snippet(path: "Spindle/Snippets/SpindleAtoms/AtomsGettingStarted", slice: "select")
    public func select<Selected: Equatable & Sendable>(
        _ keyPath: KeyPath<Produced, Selected> & Sendable
    ) -> ModifiedAtom<Self, SelectModifier<Produced, Selected>> {
        ModifiedAtom(base: self, modifier: SelectModifier(keyPath: keyPath))
    }
}

extension Atom where Produced: Equatable {
    /// The atom's value, propagated only when it differs from the previous
    /// one. An `Equatable` value already stops at an equal one in a store;
    /// `changes` keeps the Atomic Architecture's spelling.
    public var changes: ModifiedAtom<Self, ChangesModifier<Produced>> {
        ModifiedAtom(base: self, modifier: ChangesModifier())
    }
}

/// The modifier of ``Atom/select(_:)``.
public struct SelectModifier<BaseValue: Sendable, Value: Equatable & Sendable>: AtomModifier, CustomStringConvertible {
    /// A key path as a key. `@unchecked Sendable`: it holds a `Sendable` key path.
    public struct Key: Hashable, @unchecked Sendable {
        let keyPath: KeyPath<BaseValue, Value>
    }

    let keyPath: KeyPath<BaseValue, Value> & Sendable

    public var key: Key { Key(keyPath: keyPath) }

    public func modify(_ value: BaseValue, context: AtomTransactionContext) throws(AtomError) -> Value {
        value[keyPath: keyPath]
    }

    public var description: String { "select(\(keyPath))" }
}

/// The modifier of ``Atom/changes``.
public struct ChangesModifier<Value: Equatable & Sendable>: AtomModifier, CustomStringConvertible {
    public typealias BaseValue = Value

    public var key: Int { 0 }

    public func modify(_ value: Value, context: AtomTransactionContext) throws(AtomError) -> Value {
        value
    }

    public var description: String { "changes" }
}
