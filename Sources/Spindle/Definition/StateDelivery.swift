/// Which of a loop's states a feedback is handed.
public enum StateDelivery: Sendable, Hashable {
    /// Every state, in reduction order: the initial state, then each state
    /// a reduction makes. The default.
    case everyState
    /// Conflated, for renderers: the feedback always gets the initial state
    /// first (as Spin.Swift renders it), then may skip intermediate states
    /// but, while the loop runs, always gets to the latest one, in order,
    /// never the same state twice. A feedback on the loop's executor runs
    /// once per batch, with the batch's last state; a feedback on a queue
    /// has at most one newer state waiting (beside the initial state until
    /// it is taken), which a newer one replaces (a stop drops a state still
    /// waiting, as for every feedback on a queue).
    case latestState
}
