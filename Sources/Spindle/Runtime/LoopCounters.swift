import Atomics

/// The loop's event and effect counters. Every field is an atomic that any
/// thread may read; the writers are named per field.
final class LoopCounters: Sendable {
    /// Written by the reducer thread after each batch.
    let reduced = ManagedAtomic<Int>(0)
    /// Events refused by a full bounded queue under `.dropNewest` (producers).
    let dropped = ManagedAtomic<Int>(0)
    /// Events accepted, then thrown away by a discarding stop (reducer thread).
    let discardedAtStop = ManagedAtomic<Int>(0)
    /// Effect runs started (feedback queues).
    let runsStarted = ManagedAtomic<Int>(0)
    /// Effect runs cancelled by a new state or by stop.
    let runsCancelled = ManagedAtomic<Int>(0)
    /// Events emitted by a cancelled run (or after stop) and discarded.
    let lateEventsDiscarded = ManagedAtomic<Int>(0)
    /// Emits answered `.stopped`.
    let rejectedAfterStop = ManagedAtomic<Int>(0)
    /// Effect errors reported to the error hook.
    let effectErrors = ManagedAtomic<Int>(0)
}

/// A snapshot of a loop's counters.
public struct LoopStatistics: Sendable, Hashable {
    /// Events reduced so far.
    public let reducedEvents: Int
    /// Events refused by a full bounded queue (``OverflowPolicy/dropNewest``).
    public let droppedEvents: Int
    /// Accepted events thrown away by ``StopMode/discardPending``.
    public let discardedAtStop: Int
    /// Effect runs started.
    public let effectRunsStarted: Int
    /// Effect runs cancelled (by a new state or by stop).
    public let effectRunsCancelled: Int
    /// Events emitted by cancelled runs (or after stop) and discarded.
    public let lateEventsDiscarded: Int
    /// `emit` calls answered ``EmitResult/stopped``.
    public let rejectedAfterStop: Int
    /// Errors thrown by effects and reported to the error hook.
    public let effectErrors: Int

    init(_ counters: LoopCounters) {
        reducedEvents = counters.reduced.load(ordering: .acquiring)
        droppedEvents = counters.dropped.load(ordering: .relaxed)
        discardedAtStop = counters.discardedAtStop.load(ordering: .relaxed)
        effectRunsStarted = counters.runsStarted.load(ordering: .relaxed)
        effectRunsCancelled = counters.runsCancelled.load(ordering: .relaxed)
        lateEventsDiscarded = counters.lateEventsDiscarded.load(ordering: .relaxed)
        rejectedAfterStop = counters.rejectedAfterStop.load(ordering: .relaxed)
        effectErrors = counters.effectErrors.load(ordering: .relaxed)
    }
}
