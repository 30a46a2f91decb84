internal import Atomics

/// The loop's other counters: of effects, drops and stops. Every field is
/// an atomic that any thread may read; the writers are named per field.
/// (The counters an emit and a slice write, `reduced`, `directRuns` and
/// `inlineRuns`, live in the loop's words: see `LoopWords`.)
///
/// One allocation for all eleven: a `ManagedBuffer` whose elements are
/// the atomics (each `UnsafeAtomic` below is a view of one). Separate
/// atomics cost an allocation each, a third of an idle loop's memory.
// `@unchecked Sendable`: `ManagedBuffer` is not `Sendable`; its elements
// are reached only as atomics.
struct LoopCounters: @unchecked Sendable {
    private enum Slot: Int, CaseIterable {
        case dropped, discardedAtStop, runsStarted, runsCancelled, lateEventsDiscarded
        case rejectedAfterStop, effectErrors, effectsDispatched, effectsHandled
        case effectsDiscardedAtStop, unhandledEffects
    }

    // The atomics are trivial values: the buffer's deinit, which destroys
    // no element, frees them.
    private let buffer: ManagedBuffer<Void, Int.AtomicRepresentation>

    /// A loop's counters, all zero.
    init() {
        buffer = .create(minimumCapacity: Slot.allCases.count) { _ in }
        buffer.withUnsafeMutablePointerToElements {
            $0.initialize(repeating: Int.AtomicRepresentation(0), count: Slot.allCases.count)
        }
    }

    // The element's address outlives the closure: the elements are part of
    // the buffer, which `self` holds.
    @inline(__always)
    private func view(_ slot: Slot) -> UnsafeAtomic<Int> {
        UnsafeAtomic(at: buffer.withUnsafeMutablePointerToElements { $0 } + slot.rawValue)
    }

    /// Events refused by a full bounded queue under `.dropNewest` (producers).
    var dropped: UnsafeAtomic<Int> { view(.dropped) }
    /// Events accepted, then thrown away by a discarding stop (runner).
    var discardedAtStop: UnsafeAtomic<Int> { view(.discardedAtStop) }
    /// Effect runs started (feedback queues).
    var runsStarted: UnsafeAtomic<Int> { view(.runsStarted) }
    /// Effect runs cancelled by a new state or by stop.
    var runsCancelled: UnsafeAtomic<Int> { view(.runsCancelled) }
    /// Events emitted by a cancelled run (or after stop) and discarded.
    var lateEventsDiscarded: UnsafeAtomic<Int> { view(.lateEventsDiscarded) }
    /// Emits answered `.stopped`.
    var rejectedAfterStop: UnsafeAtomic<Int> { view(.rejectedAfterStop) }
    /// Effect errors reported to the error hook.
    var effectErrors: UnsafeAtomic<Int> { view(.effectErrors) }
    /// Effects that reductions produced for the effect router (runner).
    var effectsDispatched: UnsafeAtomic<Int> { view(.effectsDispatched) }
    /// Effects whose handler started (route queues).
    var effectsHandled: UnsafeAtomic<Int> { view(.effectsHandled) }
    /// Effects not yet started when the loop stopped, thrown away (runner).
    var effectsDiscardedAtStop: UnsafeAtomic<Int> { view(.effectsDiscardedAtStop) }
    /// Effects no route matched (runner).
    var unhandledEffects: UnsafeAtomic<Int> { view(.unhandledEffects) }
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

    init(reduced: UnsafeAtomic<Int>, _ counters: LoopCounters) {
        reducedEvents = reduced.load(ordering: .acquiring)
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
