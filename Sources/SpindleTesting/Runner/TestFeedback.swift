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
/// what the gear propagates is emitted). The filter and the strategy apply
/// as in the engine, and the same machinery as ``TestSpin`` runs it: no
/// reducer, no real thread, no real time. Emitted events are not reduced:
/// they are collected in ``events``.
///
/// The feedback's `on:` queue is ignored: everything runs on the caller's
/// thread (see ``TestSpin`` for what escapes the runner).
///
/// **Thread safety:** `Sendable`. Drive it from one task at a time; gears
/// and effects may emit from any thread.
public final class TestFeedback<State: Sendable, Event: Sendable>: Sendable {
    private let host: EffectHost<State, Event>
    // protected by lock: the states sent, and the events emitted so far.
    private let record = Lock<(states: [State], events: [Event])>(([], []))

    /// Wraps `feedback`; a gear feedback is subscribed to its gear now.
    public init(_ feedback: Feedback<State, Event>) {
        host = EffectHost(feedbacks: [feedback])
        host.setOwner(self)
        host.attach()
    }

    deinit {
        host.stop()
    }

    /// The states handed to the feedback, in order.
    public var states: [State] { record.withLock { $0.states } }

    /// The events the feedback emitted and that were not discarded, in the
    /// order emitted (the events of runs that were cancelled before they
    /// emitted them are in ``effectLog``, as discarded).
    public var events: [Event] {
        collect()
        return record.withLock { $0.events }
    }

    /// What every run did, in order. Runs are named by the index of their
    /// state in ``states``.
    public var effectLog: [EffectLogEntry<Event>] { host.log }

    /// The runs whose task has not ended yet.
    public var activeRuns: [TestEffectRun] { host.liveRuns }

    /// Hands `state` to the feedback as its next state, then runs the queued
    /// jobs until none is left. A synchronous run happens at once; another
    /// run starts (cancelling the previous one under
    /// `ExecutionStrategy.cancelOnNewState`) and goes as far as it
    /// can — to its end, or to a suspension such as a ``TestClock`` sleep.
    public func send(_ state: State) {
        let index = record.withLock { record -> Int in
            record.states.append(state)
            return record.states.count - 1
        }
        host.deliver(state, index: index)
        host.drainExecutor()
        collect()
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
            host.drainExecutor()
            collect()
            if let settlement = host.settlement(by: deadline) { return settlement }
        }
    }

    /// Cancels every run and detaches a gear feedback (see ``TestSpin/stop()``).
    public func stop() {
        host.stop()
        collect()
    }

    private func collect() {
        while let pending = host.takePending() {
            record.withLock { $0.events.append(pending.event) }
        }
    }
}

extension TestFeedback: VirtualTimeDriver {
    func drive() {
        runUntilIdle()
    }
}
