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

/// The answer to ``SpinLoop/emit(contentsOf:)``: how many of the batch's
/// events were accepted, dropped and refused, in that order of the batch.
///
/// The accepted events are a prefix of the batch (every event before the
/// first one not accepted was accepted), and they keep their order. After
/// the prefix, either the rest was dropped (a full bounded queue under
/// ``OverflowPolicy/dropNewest``) or refused because the loop was stopping
/// (``stopped``); under ``OverflowPolicy/block`` the emit waits for space
/// instead of dropping. `accepted + dropped + stopped` is the batch's size.
public struct EmitBatchResult: Sendable, Hashable {
    /// Events accepted: each will be reduced exactly once (unless the loop
    /// is stopped with ``StopMode/discardPending``, which reports it).
    public let accepted: Int
    /// Events not accepted because a bounded queue was full under
    /// ``OverflowPolicy/dropNewest`` (counted in ``LoopStatistics/droppedEvents``).
    public let dropped: Int
    /// Events not accepted because the loop is stopping or stopped.
    public let stopped: Int

    public init(accepted: Int, dropped: Int, stopped: Int) {
        self.accepted = accepted
        self.dropped = dropped
        self.stopped = stopped
    }

    /// The batch's size: `accepted + dropped + stopped`.
    public var count: Int { accepted + dropped + stopped }
}
