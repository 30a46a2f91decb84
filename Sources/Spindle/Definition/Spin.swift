import Dispatch

/// The definition of a feedback loop: an initial state, feedbacks and a
/// reducer. A `Spin` is a value; ``start(options:)`` runs it as a
/// ``SpinLoop``. The same spin can be started many times.
///
/// ```swift
/// let spin = Spin(initialState: Levels(left: 0, right: 10)) {
///     Feedback(effect: leftEffect)
///     Feedback(effect: rightEffect)
///     Reducer(levelsReducer)
/// }
/// let loop = spin.start()
/// ```
public struct Spin<State: Sendable, Event: Sendable>: Sendable {
    /// The state the loop starts from.
    public let initialState: State
    /// The feedbacks, in declaration order.
    public let feedbacks: [Feedback<State, Event>]
    /// The reducer.
    public let reducer: Reducer<State, Event>
    /// The default queue of feedbacks that name none (nil: each gets its own
    /// serial queue). The reducer always runs on the loop's own thread.
    public let executionQueue: DispatchQueue?
    /// The observers every loop of this spin reports to (see ``observed(by:)``).
    /// Set by ``observed(by:)``, and carried over when the engine rebuilds a
    /// spin for one loop (see `PreparedSpin`).
    var observers: [ObserverCalls<State, Event>]

    /// Creates a spin with the result-builder syntax.
    /// - Parameters:
    ///   - initialState: the first state.
    ///   - queue: `executeOn:`, the default queue for feedbacks that name none.
    ///   - content: feedbacks, then one reducer.
    public init(
        initialState: State,
        executeOn queue: DispatchQueue? = nil,
        @SpinBuilder<State, Event> _ content: () -> SpinContent<State, Event>
    ) {
        let built = content()
        self.init(initialState: initialState, feedbacks: built.feedbacks, reducer: built.reducer, executeOn: queue)
    }

    /// Creates a spin from its parts.
    public init(
        initialState: State,
        feedbacks: [Feedback<State, Event>],
        reducer: Reducer<State, Event>,
        executeOn queue: DispatchQueue? = nil
    ) {
        self.initialState = initialState
        self.feedbacks = feedbacks
        self.reducer = reducer
        self.executionQueue = queue
        self.observers = []
    }

    /// This spin with `observer` added: every loop started from the result
    /// reports its reductions, batches, effect runs and refused events to
    /// it (and to the observers already installed, in installation order).
    /// - Parameter observer: the observer; see ``SpinObserver`` for which
    ///   thread calls what.
    /// - Returns: a spin equal to this one, observed.
    public func observed(by observer: some SpinObserver<State, Event>) -> Spin {
        var copy = self
        copy.observers.append(ObserverCalls(observer))
        return copy
    }

    /// Starts a loop running this spin: a reducer thread, feedback workers,
    /// and the initial state delivered to every feedback.
    /// - Parameter options: the queue and tuning for this loop.
    /// - Returns: the running loop; it stops when ``SpinLoop/stop(_:)`` is
    ///   called or when the last reference to it goes away.
    public func start(options: SpinOptions = .init()) -> SpinLoop<State, Event> {
        SpinLoop(spin: self, options: options)
    }
}
