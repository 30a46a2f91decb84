import Spindle

/// Runs one feedback against a list of states and collects the events it
/// emits, with the engine's own execution-strategy semantics.
///
/// @Snippet(path: "Spindle/Snippets/SpindleTesting/TestingFeedbackSpecs", slice: "levels")
///
/// A spec takes the same arguments as the `Feedback` initializer
/// it stands for (the effect, `filteredBy:`, `applying:`), not a `Feedback`
/// value: a feedback's effect, filter and strategy are not public, and there
/// is no public way to run a feedback over states it does not get from its
/// own loop. Write the effect as a function, and build the production
/// feedback and the spec from it.
///
/// **How it runs.** The spec builds a real `Feedback` from those arguments
/// (re-typed onto a wrapper state) and starts a real `SpinLoop`
/// with it. The loop's state says which given state is current; a driver
/// moves it on with an internal event, and the loop's reducer records the
/// feedback's events instead of applying them. Reducing a recorded event
/// yields a state the wrapper's filter turns away, so the feedback sees each
/// given state exactly once, in order. Cancellation and the discarding of a
/// cancelled run's late events are therefore the engine's, not a model of
/// them.
///
/// > Important: An event appears in the result only if the engine reduced
/// > it. Under `ExecutionStrategy.cancelOnNewState` a run is
/// > cancelled when the next state that passes the filter reaches the
/// > feedback, and whatever it emits after that is discarded. Whether a
/// > slow run is overtaken depends on ``Pacing``: with
/// > ``Pacing/afterSettling`` (the default) no run is ever overtaken.
///
/// **Settled** means: the feedback has received the last state given so
/// far, every run it started has ended (returned, thrown, or stopped
/// iterating), and every event those runs emitted has been reduced or
/// discarded. The spec polls for it every millisecond. A run that never
/// ends (an endless sequence under `ExecutionStrategy.continueOnNewState`,
/// say) never settles: the spec waits `timeout`, then stops the loop, which
/// cancels what is still running, and returns with
/// ``FeedbackRunResult/settled`` false.
///
/// Not covered: the stream form (`streamEffect:`), gear feedbacks, and
/// `executeOnReducerThread()`, which are not one effect per state; run
/// those with ``TestFeedback``, which takes the `Feedback` value itself (and
/// uses virtual time). A lensed feedback is specified by its effect on the
/// lensed part and the lensed parts of the states.
///
/// **Thread safety:** a value type; `Sendable`. Each ``run(states:pacing:timeout:)``
/// starts its own loop, so runs may overlap.
public struct FeedbackSpec<State: Sendable, Event: Sendable>: Sendable {
    typealias HarnessFeedback = Feedback<Frame<State, Event>, HarnessInput<Event>>

    /// Builds the wrapped feedback for one run.
    let makeFeedback: @Sendable (RunRecorder) -> HarnessFeedback

    /// When the spec hands the feedback the next state.
    public enum Pacing: Sendable, Hashable {
        /// Once the feedback has settled on the previous state (see
        /// ``FeedbackSpec``): every run ends before the next state, so no
        /// run is ever cancelled by a newer one. The default.
        case afterSettling
        /// As soon as the feedback has received the previous state (its run,
        /// if any, has been started). Under
        /// `ExecutionStrategy.cancelOnNewState` every async run but
        /// the last is then cancelled almost at once.
        case immediately
        /// The given duration after the feedback received the previous state.
        case every(Duration)
    }

    /// A spec for a synchronous effect, as `Feedback(effect:filteredBy:applying:)`.
    /// - Parameters:
    ///   - effect: called with each state; a non-nil result is emitted.
    ///   - predicate: the `filteredBy:` predicate, if any.
    ///   - strategy: the `applying:` strategy (no effect on synchronous runs,
    ///     which always end before the next state).
    public init(
        effect: @escaping @Sendable (State) -> Event?,
        filteredBy predicate: (@Sendable (State) -> Bool)? = nil,
        applying strategy: ExecutionStrategy = .cancelOnNewState
    ) {
        makeFeedback = { recorder in
            HarnessFeedback(
                effect: { frame in
                    let event = effect(frame.state)
                    recorder.ended(step: frame.step, cancelled: false, handedOff: 1)
                    return .emitted(event, step: frame.step)
                },
                filteredBy: Self.filter(predicate, recorder),
                applying: strategy
            )
        }
    }

    /// A spec for an async effect, as `Feedback(effect:filteredBy:applying:)`.
    public init(
        effect: @escaping @Sendable (State) async -> Event?,
        filteredBy predicate: (@Sendable (State) -> Bool)? = nil,
        applying strategy: ExecutionStrategy = .cancelOnNewState
    ) {
        self.init(throwingEffect: { await effect($0) }, filteredBy: predicate, applying: strategy)
    }

    /// A spec for a throwing async effect. A thrown error is listed in
    /// ``FeedbackRunResult/failures`` (unless the run was cancelled, or
    /// threw `CancellationError`, which the engine does not report either).
    public init(
        effect: @escaping @Sendable (State) async throws -> Event?,
        filteredBy predicate: (@Sendable (State) -> Bool)? = nil,
        applying strategy: ExecutionStrategy = .cancelOnNewState
    ) {
        self.init(throwingEffect: effect, filteredBy: predicate, applying: strategy)
    }

    private init(
        throwingEffect effect: @escaping @Sendable (State) async throws -> Event?,
        filteredBy predicate: (@Sendable (State) -> Bool)?,
        applying strategy: ExecutionStrategy
    ) {
        makeFeedback = { recorder in
            HarnessFeedback(
                effect: { (frame: Frame<State, Event>) async -> HarnessInput<Event>? in
                    do {
                        let event = try await effect(frame.state)
                        recorder.ended(step: frame.step, cancelled: Task.isCancelled, handedOff: 1)
                        return .emitted(event, step: frame.step)
                    } catch {
                        let cancelled = Task.isCancelled
                        let reported = cancelled || error is CancellationError ? nil : error
                        recorder.ended(step: frame.step, cancelled: cancelled, handedOff: 0, error: reported)
                        return nil
                    }
                },
                filteredBy: Self.filter(predicate, recorder),
                applying: strategy
            )
        }
    }

    /// A spec for an effect returning an `AsyncSequence` of events, as
    /// `Feedback(effect:filteredBy:applying:)`. A thrown error is listed in
    /// ``FeedbackRunResult/failures``.
    public init<Events: AsyncSequence & SendableMetatype>(
        effect: @escaping @Sendable (State) -> Events,
        filteredBy predicate: (@Sendable (State) -> Bool)? = nil,
        applying strategy: ExecutionStrategy = .cancelOnNewState
    ) where Events.Element == Event {
        makeFeedback = { recorder in
            HarnessFeedback(
                effect: { frame in
                    TaggedEvents(base: effect(frame.state), step: frame.step, recorder: recorder)
                },
                filteredBy: Self.filter(predicate, recorder),
                applying: strategy
            )
        }
    }

    /// The wrapper's filter: only fresh states, then the user's predicate;
    /// reports each fresh state to the recorder.
    private static func filter(
        _ predicate: (@Sendable (State) -> Bool)?,
        _ recorder: RunRecorder
    ) -> @Sendable (Frame<State, Event>) -> Bool {
        { frame in
            guard frame.fresh else { return false }
            let runs = predicate?(frame.state) ?? true
            recorder.saw(step: frame.step, startsRun: runs)
            return runs
        }
    }

    /// Runs the feedback over `states`, in order, and returns what it emitted.
    ///
    /// Each call starts a loop of its own and stops it before returning.
    ///
    /// - Parameters:
    ///   - states: the states the feedback receives, first to last (at
    ///     least one); the first is the loop's initial state.
    ///   - pacing: when the next state is handed over.
    ///   - timeout: the longest the spec waits for the feedback to receive
    ///     one state, or to settle on it.
    /// - Returns: the reduced events with the steps that emitted them, the
    ///   runs started and cancelled, the errors, and whether it settled.
    public func run(
        states: [State],
        pacing: Pacing = .afterSettling,
        timeout: Duration = .seconds(5)
    ) async -> FeedbackRunResult<Event> {
        precondition(!states.isEmpty, "SpindleTesting: FeedbackSpec.run needs at least one state")
        let recorder = RunRecorder()
        let spin = Spin(
            initialState: Frame<State, Event>(step: 0, state: states[0], fresh: true),
            feedbacks: [makeFeedback(recorder)],
            reducer: harnessReducer(states: states)
        )
        let loop = SpinLoop(spin: spin, options: SpinOptions())
        var settled = true
        for step in states.indices where settled {
            if step > 0 { loop.emit(.advance) }
            settled = await Self.wait(timeout) { recorder.counts.withLock { $0.lastSeen } >= step }
            guard settled else { break }
            switch pacing {
            case _ where step == states.count - 1:
                break
            case .afterSettling:
                settled = await Self.wait(timeout) { Self.isSettled(loop, recorder) }
            case .immediately:
                break
            case .every(let interval):
                try? await Task.sleep(for: interval)
            }
        }
        if settled {
            settled = await Self.wait(timeout) { Self.isSettled(loop, recorder) }
        }
        await loop.stop()
        let counts = recorder.counts.withLock { $0 }
        return FeedbackRunResult(
            emissions: loop.state.emissions,
            runSteps: counts.runSteps,
            cancelledSteps: counts.cancelledSteps,
            failures: counts.failures,
            settled: settled
        )
    }

    /// Every run ended, and each marker it handed to the engine was reduced
    /// or discarded. Once no run is going, no marker can be added, so the
    /// counts read in two steps cannot match early.
    private static func isSettled(_ loop: SpinLoop<Frame<State, Event>, HarnessInput<Event>>, _ recorder: RunRecorder) -> Bool {
        let counts = recorder.counts.withLock { $0 }
        guard counts.runsEnded == counts.runSteps.count else { return false }
        return loop.state.markers + loop.statistics.lateEventsDiscarded == counts.handedOff
    }

    /// Polls `condition` every millisecond until it holds (true) or
    /// `timeout` passes or the task is cancelled (false).
    private static func wait(_ timeout: Duration, until condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !condition() {
            if ContinuousClock.now >= deadline || Task.isCancelled { return false }
            try? await Task.sleep(for: .milliseconds(1))
        }
        return true
    }
}
