/// An atom whose value is the latest element of an `AsyncSequence`, as an
/// ``AsyncPhase``: suspending until the first element, then each element
/// as it comes, and the error if the sequence throws one.
///
/// The sequence is iterated in a task from the atom's first use; computing
/// the atom again starts a new iteration, and releasing it cancels the task.
///
/// @Snippet(path: "Spindle/Snippets/SpindleAtoms/AtomsAsync", slice: "sequence")
public protocol AsyncSequenceAtom: Atom where Produced == AsyncPhase<Sequence.Element, any Error> {
    associatedtype Sequence: AsyncSequence & Sendable where Sequence.Element: Sendable
    typealias Context = AtomTransactionContext

    /// The sequence to follow.
    func sequence(context: Context) throws(AtomError) -> Sequence
}

extension AsyncSequenceAtom {
    public var producer: AtomProducer<AsyncPhase<Sequence.Element, any Error>> {
        AtomProducer { context throws(AtomError) in
            let sequence = try self.sequence(context: context)
            let updater = try context.updater(of: Produced.self)
            let task = Task {
                do {
                    for try await element in sequence {
                        updater.update(.success(element))
                    }
                } catch {
                    if !Task.isCancelled { updater.update(.failure(error)) }
                }
            }
            context.addTermination { task.cancel() }
            return .suspending
        }
    }
}
