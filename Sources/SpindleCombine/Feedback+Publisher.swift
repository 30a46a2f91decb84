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
    ///   - queue: where runs are started from (nil: the loop's queue when it
    ///     runs on `SpinExecutor.queue(_:)`, or a serial queue of the
    ///     feedback's own).
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
    /// see every state from the initial one. The engine sends each state
    /// synchronously, in reduction order, where the feedback runs: on
    /// `queue` when one is named, else on the loop's executor (a reducer
    /// thread, or the loop's queue) — so the operators chained on the
    /// states publisher run there, as in Spin.Swift.
    ///
    /// > Important: Stopping (or releasing) the loop cancels the
    /// > subscription and completes the states publisher; events delivered
    /// > after that are discarded, never reduced. There is no execution
    /// > strategy: a new state never cancels the one run. Keep the chain
    /// > cheap on the loop's executor, or name a queue.
    ///
    /// - Parameters:
    ///   - effect: called once per loop, with the first state, with the
    ///     publisher of its states.
    ///   - queue: where the states are sent and the chain runs (nil: the
    ///     loop's executor).
    public init(
        streamEffect effect: @escaping @Sendable (AnyPublisher<State, Never>) -> AnyPublisher<Event, Never>,
        on queue: DispatchQueue? = nil
    ) {
        self.init(pipe: { emitter in
            let states = StateSubject<State>()
            let subscription = SubscriptionBox()
            // Subscribed with the first state, on the feedback's runner,
            // before that state is sent.
            subscription.keep(effect(states.publisher).sink { event in _ = emitter.emit(event) })
            return StatePipe(send: { states.send($0) }, close: {
                subscription.cancel()
                states.finish()
            })
        }, on: queue)
    }
}

/// The shared publisher of a stream-form feedback's states. The engine
/// sends it each state, in order, on the feedback's runner (its queue, else
/// the loop's executor), so the operators chained on it run there.
///
/// `@unchecked Sendable`: `PassthroughSubject` is not marked `Sendable`, but
/// it is thread-safe (it locks its subscriber list and demand); it is sent
/// to by one runner at a time, so its values keep their order.
final class StateSubject<State: Sendable>: @unchecked Sendable {
    private let subject = PassthroughSubject<State, Never>()

    var publisher: AnyPublisher<State, Never> { subject.eraseToAnyPublisher() }

    func send(_ state: State) { subject.send(state) }

    func finish() { subject.send(completion: .finished) }
}
