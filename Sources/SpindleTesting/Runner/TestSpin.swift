import Spindle

/// Runs a spin deterministically on the test's own thread: no reducer
/// thread, no dispatch queue, no real time.
///
/// @Snippet(path: "Spindle/Snippets/SpindleTesting/TestingDeterministicRunner", slice: "levels")
///
/// **How it runs.** Creating the runner attaches the gear feedbacks and
/// delivers the initial state to every feedback, as `start()` does.
/// ``send(_:)->_`` reduces an event at once and delivers the new state to
/// every feedback, in declaration order. A feedback's filter and strategy
/// apply as in the engine (see ``EffectLogEntry`` for what is recorded):
///
/// - a synchronous effect (also one marked `executeOnReducerThread()`) runs
///   right there, on the caller's thread;
/// - an async, `AsyncSequence` or stream effect runs as a task on an
///   executor the runner owns. Its code runs only inside the runner's
///   calls, on the caller's thread, never concurrently with the test: every
///   call (creating the runner, ``send(_:)->_``, ``step()``,
///   ``runUntilIdle(timeout:)``, a ``TestClock`` advance) runs the queued
///   jobs until none is left before it returns, so each run goes as far as
///   it can — to its end, or to a suspension such as a clock sleep;
/// - under `ExecutionStrategy.cancelOnNewState` the new state
///   cancels the feedback's previous runs, and what they emit afterwards is
///   logged as discarded, never reduced;
/// - a gear feedback is subscribed to its gear: what the gear propagates is
///   emitted, from the propagating thread.
///
/// **Effects as data.** When the spin's reducer has effects
/// (`Reducer(_:effects:)`), each reduction's effects are dispatched right
/// after the new state is recorded and before the feedbacks receive it, in
/// the order the reducer listed them, each to the first route that claims
/// it, as in the engine. A synchronous handler runs right there, on the
/// caller's thread; an async or emitting handler runs as a task on the
/// runner's executor, like an async effect, so a ``TestClock`` drives it.
/// Handlers are never overtaken by a new state; ``stop()`` cancels them.
/// An effect no route claims is logged as unhandled (see
/// ``unhandledEffects(as:)``), never dropped silently, and a handler's
/// error is logged as failed. ``effects(as:)`` lists every effect
/// dispatched, handled or not.
///
/// Emitted events are not reduced at once: they wait in one FIFO queue
/// (``pendingEvents``), in the order they were emitted. ``step()`` reduces
/// the oldest; ``runUntilIdle(timeout:)`` alternates — run every queued
/// job, then reduce one pending event — until neither is left. So each
/// state's runs go as far as they can before the next state arrives. This
/// is one of the orders the engine may produce (it promises order per
/// producer only), made repeatable.
///
/// Time is virtual: effects that wait should sleep on a ``TestClock`` they
/// capture, and the test moves it with ``TestClock/advance(by:)``, which
/// lets this runner run until idle after each wake-up.
///
/// > Important: Code that leaves the runner's executor is not controlled:
/// > an unstructured `Task { }` started by an effect, code isolated to the
/// > main actor or to an actor with its own executor, `Task.sleep` on a real
/// > clock, real I/O. When a run waits on such a thing,
/// > ``runUntilIdle(timeout:)`` returns ``Settlement/waiting(on:)`` naming
/// > it, after waiting up to `timeout` (zero by default) in real time for it
/// > to come back. It never hangs.
///
/// The `on:` queue of feedbacks and `SpinOptions.executor` are ignored:
/// everything runs on the caller's thread.
///
/// **Thread safety:** `Sendable`; the state is behind a lock. Drive it from
/// one task at a time (the test's); gears and effects may emit from any
/// thread.
public final class TestSpin<State: Sendable, Event: Sendable>: Sendable {
    // The real loop, driven by hand.
    let driver: LoopDriver<State, Event>
    /// The most events ``runUntilIdle(timeout:)`` reduces in one call.
    public let stepLimit: Int

    /// Why the spin's per-start feedbacks could not be made (no
    /// environment, or one of another type than they need), or nil. As for
    /// `SpinLoop.startError`; the spin then runs without them.
    public let startError: SpinExecutorError?

    /// Starts running `spin` deterministically: attaches its gear feedbacks
    /// and delivers the initial state to every feedback.
    /// - Parameters:
    ///   - spin: the spin under test.
    ///   - stepLimit: the most events one ``runUntilIdle(timeout:)`` reduces
    ///     before it gives up (a loop that never stops emitting).
    public convenience init(_ spin: Spin<State, Event>, stepLimit: Int = 10_000) {
        self.init(resolving: spin, environment: nil, stepLimit: stepLimit)
    }

    /// Starts running `spin` deterministically, its per-start feedbacks
    /// (`Feedback.withEnvironment`) made from `environment`, as
    /// `Spin.start(environment:options:)` makes them.
    /// - Parameters:
    ///   - spin: the spin under test.
    ///   - environment: this start's environment.
    ///   - stepLimit: the most events one ``runUntilIdle(timeout:)`` reduces
    ///     before it gives up.
    public convenience init(_ spin: Spin<State, Event>, environment: some Sendable, stepLimit: Int = 10_000) {
        self.init(resolving: spin, environment: environment, stepLimit: stepLimit)
    }

    private init(resolving unresolved: Spin<State, Event>, environment: (any Sendable)?, stepLimit: Int) {
        let (spin, startError) = unresolved.resolvingEnvironment(environment)
        self.startError = startError
        self.stepLimit = stepLimit
        // The runner a TestClock drives after a wake-up: this one, weakly.
        let owner = Lock(WeakDriver(value: nil))
        driver = LoopDriver(spin: spin, owner: { owner.withLock { $0.value } })
        owner.withLock { $0.value = self }
        driver.start()
    }

    deinit {
        driver.stop()
    }

    /// The latest state.
    public var state: State { driver.books.state }
    /// Every state, in order: the initial state, then one per reduced event.
    public var states: [State] { driver.books.states }
    /// Every event reduced (sent or emitted), in order: `states[i + 1]`
    /// follows `events[i]`.
    public var events: [Event] { driver.books.events }
    /// The events emitted by feedbacks and not reduced yet, oldest first.
    public var pendingEvents: [Event] { driver.queue.pending }
    /// What every effect run did, in order.
    public var effectLog: [EffectLogEntry<Event>] { driver.books.log }
    /// The runs whose task has not ended yet (cancelled ones included).
    public var activeRuns: [TestEffectRun] { driver.books.liveRuns }

    /// Reduces `event` at once, dispatches the reduction's effects (a
    /// reducer with effects), delivers the new state to every feedback, and
    /// runs the queued jobs until none is left (so new runs go as far as
    /// they can, and overtaken runs end). Emitted events are queued, not
    /// reduced.
    /// - Returns: the new state.
    @discardableResult
    public func send(_ event: Event) -> State {
        _ = driver.send(event)
        return state
    }

    /// Sends each event in turn (see ``send(_:)->_``); the events the feedbacks
    /// emit meanwhile stay pending.
    public func send(_ events: Event...) {
        for event in events { _ = driver.send(event) }
    }

    /// Reduces the oldest pending event, if any, and delivers the new state
    /// (then runs the queued jobs, as ``send(_:)->_`` does).
    /// - Returns: the new state, or nil when no event was pending.
    @discardableResult
    public func step() -> State? {
        driver.step() ? state : nil
    }

    /// Runs queued jobs and reduces pending events, alternately (all jobs,
    /// then one event), until neither is left; then answers whether the spin
    /// is settled.
    ///
    /// - Parameter timeout: how long to wait, in real time, for runs that
    ///   wait on something outside the runner (see ``TestSpin``) to come
    ///   back with a job. Zero (the default) does not wait.
    /// - Returns: ``Settlement/settled`` when nothing more happens until the
    ///   test acts; ``Settlement/waiting(on:)`` with the runs that may still
    ///   do something by themselves; ``Settlement/stepLimitReached(_:)``
    ///   when ``stepLimit`` events were reduced without becoming idle.
    @discardableResult
    public func runUntilIdle(timeout: Duration = .zero) -> Settlement {
        let deadline = ContinuousClock.now + timeout
        var steps = 0
        while true {
            driver.drainJobs()
            if steps < stepLimit, driver.step() {
                steps += 1
                continue
            }
            if !driver.isStopped, !pendingEvents.isEmpty { return .stepLimitReached(steps) }
            if let settlement = driver.settlement(by: deadline) { return settlement }
        }
    }

    /// Stops the spin as the engine's stop does: cancels every run, effect
    /// handlers included (logged as cancelled), detaches gears, lets the
    /// cancelled runs end, and discards whatever is emitted afterwards.
    /// Pending events are left as they are. Called when the runner goes
    /// away.
    public func stop() {
        driver.stop()
    }
}

extension TestSpin: VirtualTimeDriver {
    func drive() {
        runUntilIdle()
    }
}
