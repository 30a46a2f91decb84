/// What happens to a feedback's running effect when a new state arrives.
public enum ExecutionStrategy: Sendable, Hashable {
    /// The previous run is cancelled: its `Task` is cancelled, its sequence is
    /// ended, and any event it emits after that moment is discarded, never
    /// reduced. The default.
    case cancelOnNewState
    /// Earlier runs go on and every event they emit is reduced.
    case continueOnNewState
}
