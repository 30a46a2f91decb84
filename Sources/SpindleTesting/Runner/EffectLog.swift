/// One effect run under a ``TestSpin`` or a ``TestFeedback``: which feedback
/// ran, for which state.
///
/// **Thread safety:** a value type; `Sendable`.
public struct TestEffectRun: Sendable, Hashable, CustomStringConvertible {
    /// The feedback's index in the spin's feedbacks (declaration order); 0
    /// for a ``TestFeedback``.
    public let feedback: Int
    /// The index of the state that started the run, in the runner's
    /// `states`. A stream feedback's single run, and a gear feedback's
    /// attachment, start with the first state: 0.
    public let state: Int

    /// Creates a run identifier (for comparisons in tests).
    public init(feedback: Int, state: Int) {
        self.feedback = feedback
        self.state = state
    }

    public var description: String { "feedback \(feedback) @ state \(state)" }
}

/// What happened to an effect run, in the order it happened.
///
/// Every run starts with ``Kind-swift.enum/started`` and, once its task has
/// ended, has exactly one ``Kind-swift.enum/finished`` or
/// ``Kind-swift.enum/failed(_:)``. A synchronous run starts, emits and
/// finishes at once.
///
/// **Thread safety:** a value type; `Sendable`.
public struct EffectLogEntry<Event: Sendable>: Sendable {
    /// The kinds of entries.
    public enum Kind: Sendable {
        /// The run began (its state passed the feedback's filter).
        case started
        /// The run emitted an event, which was queued for reduction.
        case emitted(Event)
        /// The run emitted an event after it was cancelled (or after the
        /// runner stopped): discarded, never reduced.
        case discarded(Event)
        /// The runner cancelled the run: a newer state under
        /// ``Spindle/ExecutionStrategy/cancelOnNewState``, or ``TestSpin/stop()``.
        case cancelled
        /// The run's task ended: it returned, or threw `CancellationError`,
        /// or threw anything after it had been cancelled.
        case finished
        /// The run threw an error while not cancelled (the engine reports
        /// such errors to ``Spindle/SpinOptions/onEffectError``).
        case failed(any Error)
    }

    /// The run.
    public let run: TestEffectRun
    /// What happened to it.
    public let kind: Kind
}

extension EffectLogEntry: CustomStringConvertible {
    public var description: String {
        switch kind {
        case .started: "\(run): started"
        case .emitted(let event): "\(run): emitted \(event)"
        case .discarded(let event): "\(run): discarded \(event)"
        case .cancelled: "\(run): cancelled"
        case .finished: "\(run): finished"
        case .failed(let error): "\(run): failed with \(error)"
        }
    }
}

/// Queries over a runner's effect log.
extension Array {
    /// The runs that started, in order.
    public func startedRuns<Event>() -> [TestEffectRun] where Element == EffectLogEntry<Event> {
        compactMap { if case .started = $0.kind { $0.run } else { nil } }
    }

    /// The runs that were cancelled, in order.
    public func cancelledRuns<Event>() -> [TestEffectRun] where Element == EffectLogEntry<Event> {
        compactMap { if case .cancelled = $0.kind { $0.run } else { nil } }
    }

    /// The events emitted and queued for reduction, in order.
    public func emittedEvents<Event>() -> [Event] where Element == EffectLogEntry<Event> {
        compactMap { if case .emitted(let event) = $0.kind { event } else { nil } }
    }

    /// The events discarded because their run had been cancelled, in order.
    public func discardedEvents<Event>() -> [Event] where Element == EffectLogEntry<Event> {
        compactMap { if case .discarded(let event) = $0.kind { event } else { nil } }
    }

    /// The entries of one run, in order.
    public func entries<Event>(of run: TestEffectRun) -> [EffectLogEntry<Event>.Kind] where Element == EffectLogEntry<Event> {
        filter { $0.run == run }.map(\.kind)
    }
}
