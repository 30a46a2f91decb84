extension TaskAtom {
    /// The task's progress as an ``AsyncPhase``: ``AsyncPhase/suspending``
    /// until it ends, then its value. A new task (the atom recomputed)
    /// starts again from `suspending`.
    public var phase: ModifiedAtom<Self, PhaseModifier<Value, Never>> {
        ModifiedAtom(base: self, modifier: PhaseModifier())
    }
}

extension ThrowingTaskAtom {
    /// The task's progress as an ``AsyncPhase``: ``AsyncPhase/suspending``
    /// until it ends, then its value or its error.
    public var phase: ModifiedAtom<Self, PhaseModifier<Value, any Error>> {
        ModifiedAtom(base: self, modifier: PhaseModifier())
    }
}

/// The modifier of ``TaskAtom/phase`` and ``ThrowingTaskAtom/phase``.
public struct PhaseModifier<Success: Sendable, Failure: Error>: AtomModifier, CustomStringConvertible {
    public typealias BaseValue = Task<Success, Failure>
    public typealias Value = AsyncPhase<Success, Failure>

    public var key: Int { 0 }

    public func modify(_ task: Task<Success, Failure>, context: AtomTransactionContext) throws(AtomError) -> Value {
        let updater = try context.updater(of: Value.self)
        let waiter = Task {
            let result = await task.result
            updater.update(AsyncPhase(result))
        }
        context.addTermination { waiter.cancel() }
        return .suspending
    }

    public var description: String { "phase" }
}
