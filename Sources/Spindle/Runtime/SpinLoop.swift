/// A running feedback loop: one reducer thread, feedback workers on dispatch
/// queues, and a lock-free event queue between them.
///
/// Create one with ``Spin/start(options:)``. Emit events from any thread;
/// read ``state`` from any thread without a lock; observe every state with
/// ``states``; stop with ``stop(_:)`` (or release the last reference).
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
    let core: LoopCore<State, Event>

    init(spin: Spin<State, Event>, options: SpinOptions) {
        let prepared = PreparedSpin(spin)  // this loop's own effect runtime, if any
        core = LoopCore(spin: prepared.spin, options: options)
        prepared.connect(to: core)
        core.start(spin: prepared.spin)
    }

    /// Starts a loop with a `states` stream subscribed before the reducer
    /// thread starts, so the stream begins with the initial state even when
    /// the loop moves on at once (`states` on a running loop begins with the
    /// state current when it is read).
    static func startObserved(spin: Spin<State, Event>, options: SpinOptions)
        -> (loop: SpinLoop<State, Event>, states: AsyncStream<State>) {
        let prepared = PreparedSpin(spin)
        let loop = SpinLoop(unstarted: prepared, options: options)
        let states = loop.states
        loop.core.start(spin: prepared.spin)
        return (loop, states)
    }

    private init(unstarted prepared: PreparedSpin<State, Event>, options: SpinOptions) {
        core = LoopCore(spin: prepared.spin, options: options)
        prepared.connect(to: core)
    }

    /// Releasing the last reference stops the loop: it drains what was
    /// accepted, cancels effects, and its thread exits on its own.
    deinit {
        core.releaseWithoutStop()
    }

    /// The latest published state. Any thread, no lock; published after each
    /// batch the reducer thread reduces.
    public var state: State { core.snapshot.value }

    /// A new stream of states: the current state first, then every new state
    /// in reduction order. It ends when the loop stops (after the final
    /// state); on a stopped loop it yields the final state and ends.
    public var states: AsyncStream<State> {
        core.observers.subscribe { [core] in core.parker.notify() }
    }

    /// Sends an event to the loop. Any thread; lock-free on the default queue.
    ///
    /// - Parameter event: the event to reduce.
    /// - Returns: ``EmitResult/accepted`` (it will be reduced),
    ///   ``EmitResult/dropped`` (a full bounded queue under
    ///   ``OverflowPolicy/dropNewest``), or ``EmitResult/stopped``.
    /// - Complexity: O(1); under ``OverflowPolicy/block`` it waits while the
    ///   bounded queue is full (never on the reducer thread itself).
    @discardableResult
    public func emit(_ event: Event) -> EmitResult {
        core.emit(event)
    }

    /// Stops the loop: no event is accepted after this call begins; with
    /// ``StopMode/drain`` (the default) every accepted event is reduced first.
    /// Then every effect is cancelled, the state streams end, and the reducer
    /// thread is joined. Calling it again (or concurrently) waits for the same
    /// stop and returns the same report; the first call's mode wins.
    ///
    /// - Parameter mode: drain (default) or discard the pending events.
    /// - Returns: how many events were reduced, and how many discarded.
    @discardableResult
    public func stop(_ mode: StopMode = .drain) async -> StopReport {
        await core.stop(mode)
    }

    /// True once the loop has stopped (its reducer thread finished).
    public var isStopped: Bool { core.isStopped }

    /// The loop's counters: events reduced and dropped, effect runs started and
    /// cancelled, late events discarded, effects dispatched, handled,
    /// discarded at stop and unhandled.
    public var statistics: LoopStatistics { LoopStatistics(core.counters) }
}
