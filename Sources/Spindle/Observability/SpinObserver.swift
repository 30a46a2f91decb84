/// Watches a running loop from inside: the events it reduces and the states
/// they make, its batches and queue depth, its effect runs, and every event
/// it refuses or throws away.
///
/// Install observers on a spin with ``Spin/observed(by:)``; every loop
/// started from that spin reports to them. Every requirement has an empty
/// default, so an observer implements only what it needs.
///
/// @Snippet(path: "Spindle/Snippets/Spindle/ObservingALoop", slice: "observer")
///
/// > Important: A spin without observers pays nothing for this hook: the
/// > engine checks for observers once per batch, not per event. An observer
/// > that implements ``eventReduced(_:newState:reduction:)`` costs a copy of
/// > each event and a call per event on the reducer thread; one that sets
/// > ``observesEachEvent`` to false (metrics, say) costs two clock reads and
/// > a call per batch, and an atomic increment per emit (for the queue
/// > depth). The benchmark scenario `reduce-1p-observed` measures that case.
///
/// **Thread safety:** the callbacks come from several threads at once, so
/// an observer must be `Sendable` and do its own locking. Which thread calls
/// what:
/// - the loop's reducer thread: ``loopStarted(initialState:)``,
///   ``eventReduced(_:newState:reduction:)``, ``batchReduced(_:)``,
///   ``eventDiscardedAtStop(_:)`` and ``loopStopped(_:)``, in that order of
///   life, never concurrently with each other;
/// - the emitting thread: ``eventAccepted(_:)``, ``eventDropped(_:)`` and
///   ``eventRejected(_:)``;
/// - a feedback's queue, an effect's task or the reducer thread (inline
///   feedbacks): the effect callbacks.
///
/// A callback runs on the engine's own threads: a slow observer slows the
/// loop, and one that calls back into the loop (`emit`, `stop`) from the
/// reducer thread must expect the reentrancy rules of an inline feedback.
public protocol SpinObserver<State, Event>: Sendable {
    /// The loop's state type.
    associatedtype State: Sendable
    /// The loop's event type.
    associatedtype Event: Sendable

    /// Whether the engine should call ``eventReduced(_:newState:reduction:)``
    /// for every event. Default: true. An observer that only needs batches,
    /// effect runs and refusals sets it to false and spares the reducer
    /// thread a copy and a call per event.
    var observesEachEvent: Bool { get }

    /// The loop started; no event has been reduced yet. Reducer thread.
    func loopStarted(initialState: State)

    /// The loop could not start (its options cannot run, its executor
    /// refused it, its per-start feedbacks could not be made): it is stopped
    /// from birth, and ``loopStopped(_:)`` follows with nothing reduced. On
    /// the thread that started the loop, before its start returns or throws
    /// (a bridge that cannot throw, such as SpindleNIO's `SpinHandler`,
    /// reports it here too).
    func loopFailedToStart(_ error: SpinExecutorError)

    /// `event` was reduced into `newState`; `reduction` counts the loop's
    /// reductions from 1. Reducer thread, in reduction order: replaying
    /// these events through the reducer from the initial state gives these
    /// states again.
    func eventReduced(_ event: Event, newState: State, reduction: Int)

    /// `emit` accepted `event`: it is in the queue and will be reduced (or
    /// discarded by a discarding stop). The emitting thread, right after the
    /// enqueue, so events of different producers may be reported in another
    /// order than they are reduced. Called only when ``observesEachEvent``
    /// is true.
    func eventAccepted(_ event: Event)

    /// The reducer finished a batch (its state is published and its states
    /// are on their way to feedbacks). Reducer thread.
    func batchReduced(_ batch: ReductionBatch)

    /// A full bounded queue refused `event` under
    /// ``OverflowPolicy/dropNewest``. The emitting thread.
    func eventDropped(_ event: Event)

    /// `event` was emitted after the loop began stopping, and refused
    /// (`emit` answered ``EmitResult/stopped``). The emitting thread.
    func eventRejected(_ event: Event)

    /// A stop with ``StopMode/discardPending`` threw away `event`, accepted
    /// but never reduced. Reducer thread.
    func eventDiscardedAtStop(_ event: Event)

    /// An effect run began: a synchronous effect was called, or an async
    /// effect's task was started.
    func effectStarted(_ run: EffectRun)

    /// An effect run was cancelled, by a new state
    /// (``ExecutionStrategy/cancelOnNewState``) or by stop.
    func effectCancelled(_ run: EffectRun)

    /// An effect run emitted `event`, and the loop accepted it: the event
    /// will be reduced (or discarded by a discarding stop). The emitting
    /// thread, after ``eventAccepted(_:)``; for a synchronous run, between
    /// its ``effectStarted(_:)`` and its ``effectFinished(_:)``. Runs of a
    /// feedback's effect and of an effect router's handlers are reported;
    /// a gear's events are not (a gear is not a run). Called only when
    /// ``observesEachEvent`` is true.
    func effectEmitted(_ event: Event, from run: EffectRun)

    /// An effect run returned (or, for a cancelled async run, its task ended).
    func effectFinished(_ run: EffectRun)

    /// An effect run threw `error` (not a cancellation). The loop reports it
    /// to ``SpinOptions/onEffectError`` too, and keeps running.
    func effectFailed(_ run: EffectRun, error: any Error)

    /// A run emitted `event` after it was cancelled (or after stop): the
    /// event was discarded, never reduced.
    func lateEventDiscarded(_ event: Event, from run: EffectRun)

    /// The loop stopped: every callback of its reducer thread came before
    /// this one. Reducer thread, as its last act.
    func loopStopped(_ report: StopReport)
}

extension SpinObserver {
    public var observesEachEvent: Bool { true }
    public func loopStarted(initialState: State) {}
    public func loopFailedToStart(_ error: SpinExecutorError) {}
    public func eventReduced(_ event: Event, newState: State, reduction: Int) {}
    public func eventAccepted(_ event: Event) {}
    public func batchReduced(_ batch: ReductionBatch) {}
    public func eventDropped(_ event: Event) {}
    public func eventRejected(_ event: Event) {}
    public func eventDiscardedAtStop(_ event: Event) {}
    public func effectStarted(_ run: EffectRun) {}
    public func effectCancelled(_ run: EffectRun) {}
    public func effectEmitted(_ event: Event, from run: EffectRun) {}
    public func effectFinished(_ run: EffectRun) {}
    public func effectFailed(_ run: EffectRun, error: any Error) {}
    public func lateEventDiscarded(_ event: Event, from run: EffectRun) {}
    public func loopStopped(_ report: StopReport) {}
}

/// One run of a feedback's effect, as reported to a ``SpinObserver``.
public struct EffectRun: Sendable, Hashable, CustomStringConvertible {
    /// The position of the feedback in its spin (0-based, in declaration order).
    public let feedbackIndex: Int
    /// The run's number within its feedback, from 0, in the order runs start.
    public let id: UInt64

    /// Creates a run identifier (for comparisons in tests).
    public init(feedbackIndex: Int, id: UInt64) {
        self.feedbackIndex = feedbackIndex
        self.id = id
    }

    public var description: String { "feedback \(feedbackIndex) run \(id)" }
}

/// A batch the reducer thread finished, as reported to a ``SpinObserver``.
public struct ReductionBatch: Sendable, Hashable {
    /// Events reduced in this batch.
    public let events: Int
    /// Events reduced over the loop's life, this batch included.
    public let totalReduced: Int
    /// Events accepted and not yet reduced when the batch ended: a snapshot
    /// that may lag emits in flight at that moment.
    public let queueDepth: Int
    /// Time from the batch's first reduction to its publication, on the
    /// monotonic clock (reducing, running inline feedbacks, handing the
    /// states to feedbacks and observers).
    public let duration: Duration

    /// Creates a batch report (for tests of observers).
    public init(events: Int, totalReduced: Int, queueDepth: Int, duration: Duration) {
        self.events = events
        self.totalReduced = totalReduced
        self.queueDepth = queueDepth
        self.duration = duration
    }
}
