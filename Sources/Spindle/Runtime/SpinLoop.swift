// Public: `emit`'s lane fast path is inlined into callers and calls
// CSpindle's inline functions (`spindle_lane_fast_reserve`, ...) there.
public import CSpindle

/// A running feedback loop: a lock-free event queue feeding a reducer that
/// its executor runs (by default the shared ``ReducerPool``), and feedbacks
/// on that executor or on dispatch queues.
///
/// Create one with ``Spin/start(options:)``. Emit events from any thread;
/// read ``state`` from any thread without a lock; observe every state with
/// ``states(bufferingPolicy:)``; stop with ``stop(_:)`` (or release the last reference).
///
/// > Important: Events emitted by one producer (one thread emitting in
/// > sequence, or one effect run) are reduced in the order emitted. Nothing
/// > is promised across producers.
///
/// > Important: Every event that ``emit(_:)`` answers ``EmitResult/accepted``
/// > is reduced exactly once, unless the loop is stopped with
/// > ``StopMode/discardPending`` — which reports how many it threw away.
///
/// **Thread safety:** every member may be used from any thread at any time,
/// including concurrently with `stop`.
public final class SpinLoop<State: Sendable, Event: Sendable>: Sendable {
    @usableFromInline let core: LoopCore<State, Event>
    /// `startError`, boxed: a loop that started (nearly all) carries one
    /// pointer, not the error's inline storage (a server holds a loop per
    /// connection). Before `laneKey`, whose last byte then ends the object
    /// (its size decides its allocation's size class).
    private let startFailure: StartFailure?
    /// What `emit`'s inlined lane fast path reads of the loop.
    @usableFromInline let laneKey: LaneEmitKey
    /// Why the loop could not start, or nil: for a loop a bridge started
    /// for you (``UISpin``, ``ObservationSpin``, a state stream), which
    /// cannot throw (``Spin/start(options:)`` throws instead, and never
    /// returns such a loop). A loop that could not start is stopped from
    /// birth: every emit answers ``EmitResult/stopped``, and ``stop(_:)``
    /// returns at once with nothing reduced.
    public var startError: SpinExecutorError? { startFailure?.error }

    /// Starts `spin`, its per-start feedbacks made from `environment`; a
    /// failure to start is kept in `startError` and logged: how the
    /// bridges, which cannot throw, start their loops.
    package convenience init(spin: Spin<State, Event>, options: SpinOptions, environment: (any Sendable)? = nil) {
        self.init(spin: spin, options: options, environment: environment, logsFailure: true, beforeStart: { _ in })
    }

    /// Starts `spin` behind a reduction gate (see ``ReductionGate``): the
    /// loop reduces only while `gate` is open, one event per slice, and
    /// hands each state to it. A failure to start is kept and logged, as
    /// for the bridges.
    package convenience init(spin: Spin<State, Event>, options: SpinOptions, gate: ReductionGate<State>) {
        self.init(spin: spin, options: options, environment: nil, logsFailure: true) { core in
            core.reductionGate = gate
        }
    }

    /// After its ``ReductionGate`` was opened: schedules the loop if it is
    /// idle (the gate's half of the Dekker pair with the runner's idle
    /// re-check). Any thread.
    package func wakeForGate() {
        core.wake()
    }

    /// Starts `spin`, its per-start feedbacks made from `environment`; a
    /// failure to start is kept in `startError` (and logged, if
    /// `logsFailure`). `beforeStart` runs once the loop exists, before its
    /// first slice can run.
    init(
        spin: Spin<State, Event>, options: SpinOptions, environment: (any Sendable)?,
        logsFailure: Bool, beforeStart: (LoopCore<State, Event>) -> Void
    ) {
        // A spin without per-start feedbacks or an effect router starts as
        // it is: rebuilding it (`resolvingEnvironment`, `PreparedSpin`)
        // copies a `Spin<State, Event>`, which in this unspecialized generic
        // code costs runtime metadata lookups — a large share of starting a
        // million loops.
        let started = spin.needsEnvironment
            ? Self.startResolving(spin, environment: environment, options: options, beforeStart: beforeStart)
            : Self.startUnresolved(spin, options: options, beforeStart: beforeStart)
        core = started.core
        laneKey = started.core.laneEmitKey
        startFailure = started.error.map(StartFailure.init)
        if logsFailure, let error = started.error { options.logger.error("\(error.description)") }
    }

    /// Starts a spin with no per-start feedback left to make.
    private static func startUnresolved(
        _ spin: Spin<State, Event>, options: SpinOptions, refusal: SpinExecutorError? = nil,
        beforeStart: (LoopCore<State, Event>) -> Void
    ) -> (core: LoopCore<State, Event>, error: SpinExecutorError?) {
        spin.reducer.loopEffects == nil
            ? startCore(spin, options: options, refusal: refusal, beforeStart: beforeStart)
            : startPrepared(spin, options: options, refusal: refusal, beforeStart: beforeStart)
    }

    /// Makes the spin's per-start feedbacks from `environment`, then starts
    /// it; a spin whose feedbacks cannot be made is built without them and
    /// never started (`refusal`).
    @inline(never)
    private static func startResolving(
        _ spin: Spin<State, Event>, environment: (any Sendable)?, options: SpinOptions,
        beforeStart: (LoopCore<State, Event>) -> Void
    ) -> (core: LoopCore<State, Event>, error: SpinExecutorError?) {
        let resolved = spin.resolvingEnvironment(environment)
        return startUnresolved(resolved.spin, options: options, refusal: resolved.error, beforeStart: beforeStart)
    }

    // Never inlined: its frame holds a `PreparedSpin`, whose size the
    // compiler reads from runtime metadata at the top of whichever function
    // holds it, on every path.
    @inline(never)
    private static func startPrepared(
        _ spin: Spin<State, Event>, options: SpinOptions, refusal: SpinExecutorError?,
        beforeStart: (LoopCore<State, Event>) -> Void
    ) -> (core: LoopCore<State, Event>, error: SpinExecutorError?) {
        let prepared = PreparedSpin(spin, loopQueue: options.executor?.serialQueue)
        return startCore(prepared.spin, options: options, refusal: refusal) { core in
            prepared.connect(to: core)
            beforeStart(core)
        }
    }

    /// Builds the loop and starts it, unless `refusal` or its options say
    /// it cannot start.
    private static func startCore(
        _ spin: Spin<State, Event>, options: SpinOptions, refusal: SpinExecutorError?,
        beforeStart: (LoopCore<State, Event>) -> Void
    ) -> (core: LoopCore<State, Event>, error: SpinExecutorError?) {
        // Options that cannot run still make a loop (the caller holds one),
        // but one that never runs: built from options it can be built
        // with, and never registered with its executor (making an executor
        // starts nothing).
        let invalidity = options.invalidity(for: Event.self)
        let choice = options.executor ?? .sharedPool
        let core = LoopCore(
            spin: spin, options: invalidity == nil ? options : options.buildable,
            executor: choice.makeExecutor(spinsBeforeParking: Swift.max(0, options.spinsBeforeParking)))
        beforeStart(core)
        do throws(SpinExecutorError) {
            if let refusal = refusal ?? invalidity.map({ SpinExecutorError.invalidOptions(reason: $0) }) {
                core.finishUnstarted(refusal)
                throw refusal
            }
            try core.start(spin: spin)
            return (core, nil)
        } catch {
            return (core, error)
        }
    }

    /// Starts `spin`, or throws why it cannot start (not logged: the
    /// caller has the error).
    static func start(
        spin: Spin<State, Event>, options: SpinOptions, environment: (any Sendable)? = nil
    ) throws(SpinExecutorError) -> SpinLoop {
        let loop = SpinLoop(spin: spin, options: options, environment: environment, logsFailure: false) { _ in }
        if let error = loop.startError { throw error }
        return loop
    }

    /// Starts a loop with a `states` stream subscribed before its first
    /// slice, so the stream begins with the initial state even when the loop
    /// moves on at once (`states` on a running loop begins with the state
    /// current when it is read).
    static func startObserved(
        spin: Spin<State, Event>, options: SpinOptions,
        bufferingPolicy: SpinStates<State>.BufferingPolicy = .standard
    ) -> (loop: SpinLoop<State, Event>, states: SpinStates<State>) {
        var states: SpinStates<State>?
        let loop = SpinLoop(spin: spin, options: options, environment: nil, logsFailure: true) { core in
            states = core.subscribeStates(limit: bufferingPolicy.limit)
        }
        return (loop, states!)
    }

    /// Releasing the last reference stops the loop: it drains what was
    /// accepted, cancels effects, and leaves its executor on its own.
    deinit {
        core.releaseWithoutStop()
    }

    /// The latest published state. Any thread, no lock; published after each
    /// batch the reducer thread reduces.
    public var state: State { core.snapshot.value() }

    /// A new subscription to the loop's states, as ``states(bufferingPolicy:)``
    /// with the standard policy.
    ///
    /// Deprecated because a property that subscribes anew on every read (each
    /// with a buffer of its own) looks like a stored value; the method says
    /// what it does.
    @available(*, deprecated, renamed: "states()", message: "each read subscribes anew; call states() once and keep the sequence")
    public var states: SpinStates<State> {
        states()
    }

    /// A new subscription to the loop's states: the current state first,
    /// then every new state in reduction order, kept as `bufferingPolicy`
    /// says while the consumer lags.
    ///
    /// It ends when the loop stops (after the final state); on a stopped
    /// loop it yields the final state and ends. Each call subscribes anew,
    /// with a buffer of its own: call it once and keep the sequence.
    /// Cancelling the task waiting in `next()`, or dropping the sequence and
    /// its iterators, ends the subscription. See ``SpinStates`` for how
    /// `next()` waits.
    ///
    /// With ``SpinStates/BufferingPolicy/standard`` (the default) at most
    /// 4,096 states wait: a consumer that lags further skips the oldest,
    /// and always gets to the latest and the final one, in bounded memory.
    /// ``SpinStates/BufferingPolicy/latest`` conflates to one waiting state
    /// (a renderer's choice). With ``SpinStates/BufferingPolicy/unbounded``
    /// it sees every state, and a consumer that lags for good makes the
    /// buffer grow without bound.
    ///
    /// @Snippet(path: "Spindle/Snippets/Spindle/AsyncAwait", slice: "latest")
    ///
    /// - Parameter bufferingPolicy: what to keep while the consumer lags.
    /// - Returns: the subscription, an `AsyncSequence` of states.
    public func states(bufferingPolicy: SpinStates<State>.BufferingPolicy = .standard) -> SpinStates<State> {
        core.subscribeStates(limit: bufferingPolicy.limit)
    }

    /// Sends an event to the loop. Any thread; lock-free on the default queue.
    ///
    /// - Parameter event: the event to reduce.
    /// - Returns: ``EmitResult/accepted`` (it will be reduced),
    ///   ``EmitResult/dropped`` (a full bounded queue under
    ///   ``OverflowPolicy/dropNewest``), or ``EmitResult/stopped``.
    /// - Complexity: O(1); under ``OverflowPolicy/block`` it waits while the
    ///   bounded queue is full (never on the reducer thread itself).
    @inlinable @discardableResult
    public func emit(_ event: Event) -> EmitResult {
        // The lane fast path (this thread emits into this loop often, see
        // LANES.md), inlined whole into the caller: the event's copy is
        // specialized for `Event` in the caller's module, and no call frame
        // spills registers on the way (an emit's stores are what it waits
        // for when the lines it writes are on the other core). Everything
        // else is `LoopCore.emit`.
        var slot: UnsafeMutableRawPointer?
        if let lane = spindle_lane_fast_reserve(laneKey.loopID, laneKey.words, &slot) {
            slot.unsafelyUnwrapped.initializeMemory(as: Event.self, to: event)
            let runsHere = spindle_lane_fast_publish(lane, laneKey.words) < SPINDLE_SCHEDULING_RUNNING
                && core.wakeAfterLaneEmit(lane)
            if laneKey.observed { acceptedOnLane(event) }
            // The inline fast path (an emit on the loop's own context).
            if runsHere { core.runAfterLaneEmit() }
            return .accepted
        }
        return emitOffLane(event)
    }

    /// `emit`'s paths off the inlined fast path, out of line: a call into
    /// `LoopCore`'s generic code takes the event by address, and the caller
    /// would otherwise copy it to its stack before every emit (two more
    /// stores on the fast path) for a call it seldom makes. Specialized in
    /// the caller's module, so the event comes here in registers.
    @usableFromInline @inline(never)
    func emitOffLane(_ event: Event) -> EmitResult { core.emit(event) }

    /// The in-place emit (``OwnExecutorEmitter``) of this loop, for a
    /// caller on the loop's own executor's serial context that emits per
    /// message and keeps it (SpindleNIO's handler). Unowned: valid only
    /// while this loop is alive (the caller holds it).
    package var ownExecutorEmitter: OwnExecutorEmitter<State, Event> { OwnExecutorEmitter(core: core) }

    /// An emit that never waits: nil instead of waiting when a
    /// ``OverflowPolicy/block`` bounded queue is full (nothing is then
    /// accepted, counted or reported; the caller keeps the event and tries
    /// again later). Observers hear of every other answer, as of any emit.
    /// For producers that must not block, on the loop's own executor above
    /// all (SpindleNIO's handler, on its event loop). Any thread.
    package func emitWithoutWaiting(_ event: Event) -> EmitResult? {
        let result: EmitResult
        switch core.emitUnreportedWithoutWaiting(event) {
        case .accepted: result = .accepted
        case .dropped: result = .dropped
        case .stopped: result = .stopped
        case .full: return nil
        }
        if let hub = core.hub { core.report(result, of: event, to: hub) }
        return result
    }

    @usableFromInline @inline(never)
    func acceptedOnLane(_ event: Event) { core.acceptedOnLane(event) }

    /// Sends many events at once, in order: what `emit(_:)` does for each,
    /// with one synchronisation for the batch on the default queue (one
    /// tail exchange per 128 events and one wake-up, where single emits pay
    /// one each), and one claim per run of free slots on a bounded queue.
    ///
    /// The batch keeps its order, and its place in the emitting thread's
    /// order: its events are reduced after everything this thread emitted
    /// before the call and before everything it emits after. Other
    /// producers' events may come before, after or (on a bounded queue
    /// that fills up) between runs of the batch.
    ///
    /// - Parameter events: the events to reduce, in order.
    /// - Returns: how many were accepted (a prefix of the batch), dropped
    ///   (a full bounded queue under ``OverflowPolicy/dropNewest``: the rest
    ///   of the batch), or refused because the loop is stopping.
    /// - Complexity: O(n); under ``OverflowPolicy/block`` it waits while the
    ///   bounded queue is full (never on the reducer's executor itself).
    @discardableResult
    public func emit<Events: Sequence>(contentsOf events: Events) -> EmitBatchResult where Events.Element == Event {
        if let result = events.withContiguousStorageIfAvailable({ core.emit(contentsOf: $0) }) {
            return result
        }
        return Array(events).withUnsafeBufferPointer { core.emit(contentsOf: $0) }
    }

    /// Stops the loop: no event is accepted after this call begins; with
    /// ``StopMode/drain`` (the default) every accepted event is reduced first.
    /// Then every effect is cancelled, the state streams end, and the loop
    /// leaves its executor (a dedicated thread exits on its own: the call
    /// never blocks a thread, and never joins one from async code). Calling it again (or concurrently) waits for the same
    /// stop and returns the same report; the first call's mode wins.
    ///
    /// - Parameter mode: drain (default) or discard the pending events.
    /// - Returns: how many events were reduced, and how many discarded.
    @discardableResult
    public func stop(_ mode: StopMode = .drain) async -> StopReport {
        await core.stop(mode)
    }

    /// Requests a stop without waiting for it: the gate closes at once
    /// (later emits answer ``EmitResult/stopped``) and the loop finishes in
    /// the background, exactly as ``stop(_:)`` finishes it. For synchronous
    /// code that must not wait: a channel handler's `channelInactive`, a
    /// Combine subscription's `cancel`, a `deinit`. A later (or concurrent)
    /// `await stop()` waits for this stop and returns its report; the first
    /// request's mode wins.
    ///
    /// Any thread; never blocks, runs no user code.
    public func requestStop(_ mode: StopMode = .drain) {
        core.requestStop(mode)
    }

    /// Returns once every event accepted before the call has been reduced
    /// and its state handed to the loop's feedbacks that run in the slice
    /// (those that name no queue), in order — the way a test or a server
    /// waits for what it emitted, instead of polling ``state``. Events
    /// accepted after the call may be reduced too. Feedbacks on a queue of
    /// their own (``Feedback/execute(on:)``) and async effects may still be
    /// running.
    ///
    /// On a stopped loop it returns at once; a stop while it waits ends the
    /// wait (with ``StopMode/discardPending``, the discarded events are
    /// never reduced). Never blocks a thread.
    public func settled() async {
        await core.settle()
    }

    /// True once the loop has stopped (its last slice ran).
    public var isStopped: Bool { core.isStopped }

    /// The loop's counters: events reduced and dropped, effect runs started and
    /// cancelled, late events discarded, effects dispatched, handled,
    /// discarded at stop and unhandled.
    public var statistics: LoopStatistics { LoopStatistics(reduced: core.words.reduced, core.counters) }
}

/// A loop's failure to start (see `SpinLoop.startError`).
private final class StartFailure: Sendable {
    let error: SpinExecutorError

    init(_ error: SpinExecutorError) {
        self.error = error
    }
}

/// ``SpinLoop/emit(_:)`` from the loop's own executor's serial context,
/// for a caller that knows it is there (SpindleNIO's handler, which NIO
/// calls on its channel's event loop): an idle loop with an empty queue
/// reduces the event at once, on the calling thread, with none of the
/// checks `emit` makes to find where it runs (`LoopCore.emitOnOwnExecutor`).
/// Only on that context: elsewhere an idle loop would run on the calling
/// thread (debug builds trap).
///
/// Held apart from the loop (`SpinLoop.ownExecutorEmitter`), so that an
/// emit reaches the loop's core without loading the `SpinLoop` object's
/// line first (a connection's loop is cold between its requests). Holds
/// the core unretained: whoever keeps one keeps the loop alive as long.
/// (`Unmanaged`, called through a guaranteed reference: an `unowned(unsafe)`
/// reference was made strong for the call, a retain and a release of the
/// core per message.)
@usableFromInline
package struct OwnExecutorEmitter<State: Sendable, Event: Sendable> {
    @usableFromInline let core: Unmanaged<LoopCore<State, Event>>

    init(core: LoopCore<State, Event>) {
        self.core = Unmanaged.passUnretained(core)
    }

    /// Emits `event`: on the loop's own executor's serial context only.
    @usableFromInline
    package func emit(_ event: Event) -> EmitResult {
        core._withUnsafeGuaranteedRef { $0.emitOnOwnExecutor(event) }
    }
}
