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
    /// Effects that reductions produced for the effect router (reducer thread).
    let effectsDispatched = ManagedAtomic<Int>(0)
    /// Effects whose handler started (route queues).
    let effectsHandled = ManagedAtomic<Int>(0)
    /// Effects not yet started when the loop stopped, thrown away (reducer thread).
    let effectsDiscardedAtStop = ManagedAtomic<Int>(0)
    /// Effects no route matched (reducer thread).
    let unhandledEffects = ManagedAtomic<Int>(0)
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
    /// Effects that reductions produced for the loop's ``EffectRouter``
    /// (zero for a spin without one). Once the loop has stopped,
    /// `effectsDispatched == effectsHandled + effectsDiscardedAtStop + unhandledEffects`.
    public let effectsDispatched: Int
    /// Effects whose handler started (sync handlers called, async ones launched).
    public let effectsHandled: Int
    /// Effects whose handler had not started when the loop stopped: thrown
    /// away, never handled.
    public let effectsDiscardedAtStop: Int
    /// Effects that no route matched (each reported as an ``UnhandledEffectError``).
    public let unhandledEffects: Int

    init(_ counters: LoopCounters) {
        reducedEvents = counters.reduced.load(ordering: .acquiring)
        droppedEvents = counters.dropped.load(ordering: .relaxed)
        discardedAtStop = counters.discardedAtStop.load(ordering: .relaxed)
        effectRunsStarted = counters.runsStarted.load(ordering: .relaxed)
        effectRunsCancelled = counters.runsCancelled.load(ordering: .relaxed)
        lateEventsDiscarded = counters.lateEventsDiscarded.load(ordering: .relaxed)
        rejectedAfterStop = counters.rejectedAfterStop.load(ordering: .relaxed)
        effectErrors = counters.effectErrors.load(ordering: .relaxed)
        effectsDispatched = counters.effectsDispatched.load(ordering: .relaxed)
        effectsHandled = counters.effectsHandled.load(ordering: .relaxed)
        effectsDiscardedAtStop = counters.effectsDiscardedAtStop.load(ordering: .relaxed)
        unhandledEffects = counters.unhandledEffects.load(ordering: .relaxed)
    }
}
