#if canImport(Combine)
import Combine
#else
import OpenCombine
#endif
import Dispatch
import Spindle

extension Feedback {
    /// Creates a feedback from an effect returning a publisher of events
    /// (Spin.Swift's Combine feedback).
    ///
    /// `raiseLeft` is one (`lowerRight` is in the stream form,
    /// `init(streamEffect:on:)`):
    ///
    /// @Snippet(path: "Spindle/Snippets/SpindleCombine/CombinePublisherFeedbacks", slice: "feedbacks")
    ///
    /// Each state starts a run: the effect is called, its publisher is
    /// subscribed to (with unlimited demand), and every value is emitted, in
    /// order, until the publisher completes.
    ///
    /// > Important: With `ExecutionStrategy.cancelOnNewState` (the
    /// > default), a new state cancels the previous run: its subscription is
    /// > cancelled, and any event it delivers after that moment is discarded,
    /// > never reduced (counted in `lateEventsDiscarded`). With
    /// > `ExecutionStrategy.continueOnNewState`, earlier subscriptions go on
    /// > and all their values are reduced. Stopping the loop cancels every
    /// > subscription.
    ///
    /// The run is the engine's `AsyncSequence` form: the publisher's values
    /// are buffered in an `AsyncStream` and emitted from a `Task`, so the
    /// publisher may deliver on any thread.
    ///
    /// - Parameters:
    ///   - effect: called with each state, on the feedback's queue's run.
    ///   - queue: where runs are started from (nil: the spin's `executeOn:`
    ///     queue, or a serial queue of the feedback's own).
    ///   - strategy: what a new state does to a running subscription.
    public init(
        effect: @escaping @Sendable (State) -> AnyPublisher<Event, Never>,
        on queue: DispatchQueue? = nil,
        applying strategy: ExecutionStrategy = .cancelOnNewState
    ) {
        self.init(effect: { (state: State) in asyncValues(of: effect(state)) }, on: queue, applying: strategy)
    }

    /// Creates a publisher feedback whose effect runs only for states that
    /// satisfy `predicate`. A filtered-out state starts nothing and cancels
    /// nothing.
    public init(
        effect: @escaping @Sendable (State) -> AnyPublisher<Event, Never>,
        filteredBy predicate: @escaping @Sendable (State) -> Bool,
        on queue: DispatchQueue? = nil,
        applying strategy: ExecutionStrategy = .cancelOnNewState
    ) {
        self.init(
            effect: { (state: State) in asyncValues(of: effect(state)) },
            filteredBy: predicate, on: queue, applying: strategy)
    }

    /// Creates a publisher feedback whose effect sees only a part of the
    /// state, selected by a key path.
    public init<Sub>(
        effect: @escaping @Sendable (Sub) -> AnyPublisher<Event, Never>,
        lensingOn lens: KeyPath<State, Sub> & Sendable,
        on queue: DispatchQueue? = nil,
        applying strategy: ExecutionStrategy = .cancelOnNewState
    ) {
        self.init(effect: { (state: State) in effect(state[keyPath: lens]) }, on: queue, applying: strategy)
    }

    /// Creates a stream-form publisher feedback: one effect for the loop's
    /// whole life, which turns the publisher of the loop's states into a
    /// publisher of events (Spin.Swift's
    /// `(AnyPublisher<State, Never>) -> AnyPublisher<Event, Never>` feedback).
    ///
    /// `lowerRight` is one (`raiseLeft` is in the state form,
    /// `init(effect:on:applying:)`):
    ///
    /// @Snippet(path: "Spindle/Snippets/SpindleCombine/CombinePublisherFeedbacks", slice: "feedbacks")
    ///
    /// When the loop delivers its initial state, `effect` is called once and
    /// the publisher it returns is subscribed to; then the states publisher
    /// sends the initial state, and every new state in reduction order.
    /// Every value of the returned publisher is emitted, in order.
    ///
    /// The states publisher is shared (a subject): a subscriber sees the
    /// states sent after it subscribed. Subscriptions made while the returned
    /// publisher is subscribed to (the usual `map`, `filter`, `merge` chains)
    /// see every state from the initial one. States are sent from one task,
    /// one at a time.
    ///
    /// > Important: Stopping (or releasing) the loop cancels the
    /// > subscription and stops sending states; events delivered after that
    /// > are discarded, never reduced. There is no execution strategy: a new
    /// > state never cancels the one run.
    ///
    /// - Parameters:
    ///   - effect: called once per loop with the publisher of its states.
    ///   - queue: where states are handed over (nil: the spin's `executeOn:`
    ///     queue, or a serial queue of the feedback's own).
    public init(
        streamEffect effect: @escaping @Sendable (AnyPublisher<State, Never>) -> AnyPublisher<Event, Never>,
        on queue: DispatchQueue? = nil
    ) {
        self.init(
            streamEffect: { (states: AsyncStream<State>) -> AsyncStream<Event> in
                let subject = StateSubject<State>()
                let stream = asyncValues(of: effect(subject.publisher), onTermination: {
                    subject.stopForwarding()
                })
                // Subscribed now: only then are the states sent.
                subject.startForwarding(states)
                return stream
            },
            on: queue)
    }
}

/// The shared publisher of a stream-form feedback's states, and the task
/// that forwards the loop's states to it.
///
/// `@unchecked Sendable`: `PassthroughSubject` is not marked `Sendable`, but
/// it is thread-safe (it locks its subscriber list and demand); it is sent to
/// from the forwarding task only, so its values keep their order.
final class StateSubject<State: Sendable>: @unchecked Sendable {
    private struct Forwarding {
        var task: Task<Void, Never>?
        var stopped = false
    }

    private let subject = PassthroughSubject<State, Never>()
    // protected by lock
    private let forwarding = Lock(Forwarding())

    var publisher: AnyPublisher<State, Never> { subject.eraseToAnyPublisher() }

    /// Starts a task that sends every state of `states`, then completes the
    /// subject. Does nothing after ``stopForwarding()``.
    func startForwarding(_ states: AsyncStream<State>) {
        forwarding.withLock { forwarding in
            guard !forwarding.stopped else { return }
            forwarding.task = Task { [self] in
                for await state in states {
                    subject.send(state)
                }
                if !Task.isCancelled { subject.send(completion: .finished) }
            }
        }
    }

    /// Cancels the forwarding task (now, or before it starts). Any thread.
    func stopForwarding() {
        let task = forwarding.withLock { forwarding -> Task<Void, Never>? in
            forwarding.stopped = true
            defer { forwarding.task = nil }
            return forwarding.task
        }
        task?.cancel()
    }
}
