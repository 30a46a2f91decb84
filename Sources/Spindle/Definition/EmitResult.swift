/// The answer to ``SpinLoop/emit(_:)``.
public enum EmitResult: Sendable, Hashable {
    /// The event was accepted: it will be reduced exactly once (unless the
    /// loop is stopped with ``StopMode/discardPending``, which reports it).
    case accepted
    /// A bounded queue was full under ``OverflowPolicy/dropNewest``: the
    /// event was not accepted, and the loop counted it (``LoopStatistics/droppedEvents``).
    case dropped
    /// The loop is stopping or stopped: the event was not accepted.
    case stopped
}
