/// An atom whose value is a `Task` running an async function: read it as
/// the task, or as an ``AsyncPhase`` through ``TaskAtom/phase``.
///
/// Computing the atom again (a watched atom changed, a refresh) cancels the
/// previous task and starts a new one; releasing the atom cancels its task.
///
/// @Snippet(path: "Spindle/Snippets/SpindleAtoms/AtomsAsync", slice: "task")
public protocol TaskAtom: Atom where Produced == Task<Value, Never> {
    associatedtype Value: Sendable
    typealias Context = AtomTransactionContext

    /// The work, run in a new task. `context.watch` in it makes the atom
    /// depend on what it watches, as in a value atom.
    func value(context: Context) async -> Value
}

extension TaskAtom {
    public var producer: AtomProducer<Task<Value, Never>> {
        AtomProducer(
            compute: { context throws(AtomError) in
                // The task's own copy: it counts the node, which the
                // computation only lends.
                let kept = context
                return Task { await self.value(context: kept) }
            },
            end: { $0.cancel() })
    }
}

/// An atom whose value is a `Task` that may throw: its phase ends in
/// ``AsyncPhase/failure(_:)`` when it does.
///
/// @Snippet(path: "Spindle/Snippets/SpindleAtoms/AtomsAsync", slice: "throwing")
public protocol ThrowingTaskAtom: Atom where Produced == Task<Value, any Error> {
    associatedtype Value: Sendable
    typealias Context = AtomTransactionContext

    /// The work, run in a new task.
    func value(context: Context) async throws -> Value
}

extension ThrowingTaskAtom {
    public var producer: AtomProducer<Task<Value, any Error>> {
        AtomProducer(
            compute: { context throws(AtomError) in
                // The task's own copy, as `TaskAtom`'s.
                let kept = context
                return Task { try await self.value(context: kept) }
            },
            end: { $0.cancel() })
    }
}
