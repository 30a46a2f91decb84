import Spindle

/// Runs one `Feedback` value deterministically against states the
/// test hands it, and collects the events it emits.
///
/// @Snippet(path: "Spindle/Snippets/SpindleTesting/TestingDeterministicRunner", slice: "testFeedback")
///
/// Unlike ``FeedbackSpec``, it takes the `Feedback` itself, so every form
/// is covered: synchronous (also `executeOnReducerThread()`), async,
/// `AsyncSequence`, the stream form (`streamEffect:`, one run reading every
/// state sent), and gear feedbacks (subscribed when the runner is created:
/// what the gear propagates is emitted). It runs on the engine, as
/// ``TestSpin`` does: the feedback runs in a loop whose states are the
/// ones the test sends (it never sees any other), driven by hand on the
/// caller's thread, with no real thread and no real time. So the filter,
/// the strategy and the discarding of a cancelled run's late events are
/// the engine's. Emitted events are not reduced: they are collected in
/// ``events``.
///
/// The feedback's `on:` queue is ignored: everything runs on the caller's
/// thread (see ``TestSpin`` for what escapes the runner). A per-start
/// feedback (`Feedback.withEnvironment`) does nothing here: it needs a
/// start's environment (run its spin with ``TestSpin/init(_:environment:stepLimit:)``).
///
/// **Thread safety:** `Sendable`. Drive it from one task at a time; gears
/// and effects may emit from any thread.
public final class TestFeedback<State: Sendable, Event: Sendable>: Sendable {
    /// What the driven loop reduces: a state the test sends, or (collected
    /// by the queue, never reduced) an event the feedback emitted.
    enum Input: Sendable {
        case state(State)
        case emitted(Event)
    }

    // A loop of the real engine whose state is the last one sent (nil
    // before the first, which the feedback does not see), driven by hand.
    private let driver: LoopDriver<State?, Input>
    // protected by lock: the states sent.
    private let sent = Lock<[State]>([])

    /// Wraps `feedback`; a gear feedback is subscribed to its gear now.
    public init(_ feedback: Feedback<State, Event>) {
        let adapted = feedback.adapted(state: { (state: State?) in state }, event: Input.emitted)
        let spin = Spin<State?, Input>(initialState: nil, reducer: Reducer { state, input in
            if case .state(let next) = input { next } else { state }
        }) {
            adapted
        }
        // Runs are named by their state's index in `states`: the count of
        // states reduced, less one.
        driver = LoopDriver(
            name: "TestFeedback", spin: spin, stateOffset: -1,
            divert: { if case .emitted = $0 { true } else { false } })
        driver.start(owner: self)
    }

    deinit {
        driver.stop()
    }

    /// The states handed to the feedback, in order.
    public var states: [State] { sent.withLock { $0 } }

    /// The events the feedback emitted and that were not discarded, in the
    /// order emitted (the events of runs that were cancelled before they
    /// emitted them are in ``effectLog``, as discarded).
    public var events: [Event] {
        driver.queue.diverted.compactMap { if case .emitted(let event) = $0 { event } else { nil } }
    }

    /// What every run did, in order. Runs are named by the index of their
    /// state in ``states``.
    public var effectLog: [EffectLogEntry<Event>] {
        driver.books.log.compactMap { entry in
            let kind: EffectLogEntry<Event>.Kind
            switch entry.kind {
            case .emitted(.emitted(let event)): kind = .emitted(event)
            case .discarded(.emitted(let event)): kind = .discarded(event)
            case .emitted(.state), .discarded(.state), .dispatched, .unhandled: return nil
            case .started: kind = .started
            case .cancelled: kind = .cancelled
            case .finished: kind = .finished
            case .failed(let error): kind = .failed(error)
            }
            return EffectLogEntry(run: entry.run, kind: kind)
        }
    }

    /// The runs whose task has not ended yet.
    public var activeRuns: [TestEffectRun] { driver.books.liveRuns }

    /// Hands `state` to the feedback as its next state, then runs the queued
    /// jobs until none is left. A synchronous run happens at once; another
    /// run starts (cancelling the previous one under
    /// `ExecutionStrategy.cancelOnNewState`) and goes as far as it
    /// can — to its end, or to a suspension such as a ``TestClock`` sleep.
    public func send(_ state: State) {
        guard !driver.isStopped else { return }
        sent.withLock { $0.append(state) }
        _ = driver.send(.state(state))
    }

    /// Sends each state and runs until idle after each one.
    /// - Returns: every event emitted so far (``events``).
    @discardableResult
    public func run(states: [State]) -> [Event] {
        for state in states {
            send(state)
            runUntilIdle()
        }
        return events
    }

    /// Runs queued jobs until none is left, then answers whether the
    /// feedback is settled (see ``TestSpin/runUntilIdle(timeout:)``).
    @discardableResult
    public func runUntilIdle(timeout: Duration = .zero) -> Settlement {
        let deadline = ContinuousClock.now + timeout
        while true {
            driver.drainJobs()
            if let settlement = driver.settlement(by: deadline) { return settlement }
        }
    }

    /// Cancels every run and detaches a gear feedback (see ``TestSpin/stop()``).
    public func stop() {
        driver.stop()
    }
}

extension TestFeedback: VirtualTimeDriver {
    func drive() {
        runUntilIdle()
    }
}
