/// What a feedback did when a ``FeedbackSpec`` ran it over a list of states.
///
/// Only events the engine reduced are here: an event emitted by a run that
/// a newer state had cancelled (`ExecutionStrategy.cancelOnNewState`)
/// is discarded by the engine and never appears.
public struct FeedbackRunResult<Event: Sendable>: Sendable {
    /// One reduced event, and the index of the given state whose run emitted it.
    public struct Emission: Sendable {
        /// The index, in the given states, of the state that started the run.
        public let step: Int
        /// The event.
        public let event: Event

        /// Creates an emission (for comparisons in tests).
        public init(step: Int, event: Event) {
            self.step = step
            self.event = event
        }
    }

    /// The reduced events with their steps, in reduction order.
    public let emissions: [Emission]
    /// The steps whose state started a run (states the filter turned away
    /// start none), in order.
    public let runSteps: [Int]
    /// The steps whose run was cancelled before it ended: by a newer state
    /// under `ExecutionStrategy.cancelOnNewState`, or by the stop
    /// after a timeout. Synchronous runs are never cancelled.
    ///
    /// In ascending order, not the order in which the cancelled runs ended
    /// (which depends on when each task noticed its cancellation, and is
    /// not promised), so the list is the same on every run of a test.
    public let cancelledSteps: [Int]
    /// Errors thrown by runs that were not cancelled (other than
    /// `CancellationError`, as the engine reports them).
    public let failures: [EffectRunFailure]
    /// True when every run had ended and every event it emitted had been
    /// reduced or discarded before the time limit; false when the spec gave
    /// up waiting and stopped the loop (which cancels the runs still going).
    public let settled: Bool

    /// The reduced events, in reduction order.
    public var events: [Event] { emissions.map(\.event) }

    /// The reduced events emitted by the run for the state at `step`.
    public func events(forStep step: Int) -> [Event] {
        emissions.filter { $0.step == step }.map(\.event)
    }
}

extension FeedbackRunResult.Emission: Equatable where Event: Equatable {}
extension FeedbackRunResult.Emission: Hashable where Event: Hashable {}

/// An error thrown by one of a feedback's runs under a ``FeedbackSpec``.
public struct EffectRunFailure: Sendable {
    /// The index of the given state whose run threw.
    public let step: Int
    /// What the run threw.
    public let error: any Error
}
