import Spindle

/// Runs a spin deterministically on the test's own thread: the engine's own
/// loop, driven by hand, with no reducer thread, no dispatch queue and no
/// real time.
///
/// @Snippet(path: "Spindle/Snippets/SpindleTesting/TestingDeterministicRunner", slice: "levels")
///
/// **The real engine.** The runner starts a loop of the engine (the reducer
/// path, feedback workers, effect router and queue that `Spin.start()`
/// runs) on an executor it drives itself: each slice of the loop, each
/// effect task's job and each effect route's drain runs only inside the
/// runner's calls, on the caller's thread, never concurrently with the
/// test. What a spec checks is what the engine does, so a change in the
/// engine shows in the specs. What the runner records comes from the
/// loop's observer reports (see ``EffectLogEntry``).
///
/// **How it runs.** Creating the runner starts the loop: the gear feedbacks
/// are attached and every feedback gets the initial state.
/// ``send(_:)->_`` emits an event ahead of the pending ones and lets the
/// loop reduce it, and only it; the new state goes to every feedback, in
/// declaration order, where the engine runs them in the loop's slice:
///
/// - a synchronous effect (also one marked `executeOnReducerThread()`) is
///   called right there;
/// - an async, `AsyncSequence` or stream effect starts its task there: it
///   runs up to its first suspension, then on as jobs of the runner's. Every
///   call (creating the runner, ``send(_:)->_``, ``step()``,
///   ``runUntilIdle(timeout:)``, a ``TestClock`` advance) runs the queued
///   jobs until none is left before it returns, so each run goes as far as
///   it can — to its end, or to a suspension such as a clock sleep;
/// - under `ExecutionStrategy.cancelOnNewState` the new state
///   cancels the feedback's previous runs, and the engine discards what
///   they emit afterwards (logged as discarded), never reduced;
/// - a gear feedback is subscribed to its gear: what the gear propagates is
///   emitted, from the propagating thread.
///
/// **Effects as data.** When the spin's reducer has effects
/// (`Reducer(_:effects:)`), the loop's router routes each reduction's
/// effects as it reduces: each to the first route that claims it, as in
/// any loop. Every effect is logged as dispatched; one no route claims as
/// unhandled (see ``unhandledEffects(as:)``), never dropped silently. The
/// handlers are called after the feedbacks got the new state, as jobs, in
/// dispatch order (handlers of different routes, which a loop runs on
/// different queues, in the order the reducer listed their effects): a
/// synchronous one whole, an async or emitting one up to its first
/// suspension, then on as jobs, so a ``TestClock`` drives it. Handlers are
/// never overtaken by a new state; ``stop()`` cancels them. A handler's
/// error is logged as failed. ``effects(as:)`` lists every effect
/// dispatched, handled or not.
///
/// Emitted events are not reduced at once: they wait in the loop's queue
/// (``pendingEvents``), in the order they were emitted. ``step()`` lets the
/// loop reduce the oldest; ``runUntilIdle(timeout:)`` alternates — run
/// every queued job, then reduce one pending event — until neither is
/// left. So each state's runs go as far as they can before the next state
/// arrives. This is one of the orders the engine may produce (it promises
/// order per producer only), made repeatable: the loop reduces one event
/// per slice, when the test lets it.
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
/// The engine's threads are not used: the `on:` queue of feedbacks, the
/// queues of effect routes and `SpinOptions.executor` are ignored, and
/// everything runs on the caller's thread. After ``stop()`` the loop
/// refuses events, as a stopped loop's `emit` does: ``send(_:)->_`` then
/// reduces nothing and returns the state as it is.
///
/// **Thread safety:** `Sendable`; the records are behind a lock. Drive it
/// from one task at a time (the test's); gears and effects may emit from
/// any thread.
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
        driver = LoopDriver(name: "TestSpin", spin: spin)
        driver.start(owner: self)
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

    /// Reduces `event` at once, ahead of the pending events: routes the
    /// reduction's effects (a reducer with effects), delivers the new state
    /// to every feedback, and runs the queued jobs until none is left (so
    /// new runs go as far as they can, handlers are called, and overtaken
    /// runs end). Emitted events are queued, not reduced. After ``stop()``
    /// the loop refuses the event: nothing is reduced.
    /// - Returns: the new state (the current one when refused).
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
            if !driver.isStopped, driver.queue.hasPending { return .stepLimitReached(steps) }
            if let settlement = driver.settlement(by: deadline) { return settlement }
        }
    }

    /// Stops the spin's loop as the engine's stop does: cancels every run,
    /// effect handlers included (logged as cancelled), detaches gears, lets
    /// the cancelled runs end, and discards whatever is emitted afterwards.
    /// Pending events are left as they are (the loop's last slice reduces
    /// none of them); later sends are refused. Called when the runner goes
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
