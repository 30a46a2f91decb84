import Dispatch

/// The definition of a feedback loop: an initial state, feedbacks and a
/// reducer. A `Spin` is a value; ``start(options:)`` runs it as a
/// ``SpinLoop``. The same spin can be started many times.
///
/// @Snippet(path: "Spindle/Snippets/Spindle/GettingStarted", slice: "builder")
public struct Spin<State: Sendable, Event: Sendable>: Sendable {
    /// The feedbacks, in declaration order; a merged feedback
    /// (``Feedback/init(effects:)``) is listed as its parts, in order.
    public let feedbacks: [Feedback<State, Event>]
    /// The reducer.
    public let reducer: Reducer<State, Event>
    /// The observers every loop of this spin reports to (see ``observed(by:)``).
    /// Set by ``observed(by:)``, and carried over when the engine rebuilds a
    /// spin for one loop (see `PreparedSpin`).
    var observers: [ObserverCalls<State, Event>] {
        didSet { hasObservers = !observers.isEmpty }
    }
    /// Whether `feedbacks` and `observers` hold anything: kept beside them
    /// so that starting a loop, in unspecialized generic code, does not ask
    /// the runtime for the arrays' element metadata to count them.
    private(set) var hasFeedbacks: Bool
    private(set) var hasObservers = false
    /// Whether a feedback is made per start (``Feedback/withEnvironment(_:_:)``):
    /// a start then makes it from its environment (see `resolvingEnvironment`).
    let needsEnvironment: Bool
    /// The state the loop starts from.
    ///
    /// Stored last on purpose: every other field then sits at an offset
    /// fixed whatever `State` is, so the engine's unspecialized generic code
    /// reads them without asking the runtime for `Spin<State, Event>`'s
    /// metadata (a hash-table lookup per start); only this field needs it.
    public let initialState: State

    /// Creates a spin with the result-builder syntax.
    ///
    /// Where the loop runs is chosen when it starts, in one place:
    /// ``SpinOptions/executor``.
    /// - Parameters:
    ///   - initialState: the first state.
    ///   - content: one reducer and the feedbacks, before or after it
    ///     (see ``SpinBuilder`` for which order lets Swift infer `Event`).
    public init(
        initialState: State,
        @SpinBuilder<State, Event> _ content: () -> SpinContent<State, Event>
    ) {
        let built = content()
        self.init(initialState: initialState, feedbacks: built.feedbacks, reducer: built.reducer)
    }

    /// Creates a spin with Spin.Swift's declarative syntax: the reducer as
    /// an argument, the feedbacks in the block.
    ///
    /// @Snippet(path: "Spindle/Snippets/Spindle/FeedbackFormsSpinSwift", slice: "declarative")
    ///
    /// - Parameters:
    ///   - initialState: the first state.
    ///   - reducer: the reducer.
    ///   - feedbacks: the feedbacks, in declaration order.
    public init(
        initialState: State,
        reducer: Reducer<State, Event>,
        @FeedbackBuilder<State, Event> feedbacks: () -> [Feedback<State, Event>]
    ) {
        self.init(initialState: initialState, feedbacks: feedbacks(), reducer: reducer)
    }

    /// Creates a spin from its parts.
    public init(
        initialState: State,
        feedbacks: [Feedback<State, Event>],
        reducer: Reducer<State, Event>
    ) {
        // Merged feedbacks (`Feedback(effects:)`) take their parts' places.
        let feedbacks = feedbacks.flatMap(\.flattened)
        self.initialState = initialState
        self.feedbacks = feedbacks
        self.hasFeedbacks = !feedbacks.isEmpty
        self.needsEnvironment = feedbacks.contains { $0.isPerStart }
        self.reducer = reducer
        self.observers = []
    }

    /// Spin.Swift's `executeOn:`: choose where the loop runs when it starts,
    /// with ``SpinOptions/executor``.
    @available(*, unavailable, message: "choose where the loop runs when it starts: spin.start(options: SpinOptions(executor: .queue(queue)))")
    public init(
        initialState: State,
        executeOn queue: DispatchQueue,
        @SpinBuilder<State, Event> _ content: () -> SpinContent<State, Event>
    ) {
        fatalError("unavailable")
    }

    /// Spin.Swift's `executeOn:`: choose where the loop runs when it starts,
    /// with ``SpinOptions/executor``.
    @available(*, unavailable, message: "choose where the loop runs when it starts: spin.start(options: SpinOptions(executor: .queue(queue)))")
    public init(
        initialState: State,
        reducer: Reducer<State, Event>,
        executeOn queue: DispatchQueue,
        @FeedbackBuilder<State, Event> feedbacks: () -> [Feedback<State, Event>]
    ) {
        fatalError("unavailable")
    }

    /// This spin with `feedback` added last, keeping everything else (its
    /// observers included): for bridges that run a spin with a feedback of
    /// their own (SpindleCombine's `stream(from:)`).
    package func addingFeedback(_ feedback: Feedback<State, Event>) -> Spin {
        addingFeedbacks([feedback])
    }

    /// This spin with `added` after its own feedbacks, in order, keeping
    /// everything else (its observers included); rebuilt once.
    package func addingFeedbacks(_ added: [Feedback<State, Event>]) -> Spin {
        replacingFeedbacks(with: feedbacks + added)
    }

    /// This spin with `feedbacks` instead of its own, keeping everything
    /// else (its observers included).
    package func replacingFeedbacks(with feedbacks: [Feedback<State, Event>]) -> Spin {
        var copy = Spin(initialState: initialState, feedbacks: feedbacks, reducer: reducer)
        copy.observers = observers
        return copy
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

    /// Starts a loop running this spin on its executor (by default the
    /// shared ``ReducerPool``); every feedback sees the initial state first.
    ///
    /// ```swift
    /// let loop = try spin.start()
    /// ```
    ///
    /// - Parameter options: the executor, queue and tuning for this loop.
    /// - Throws: ``SpinExecutorError`` when the loop cannot start: options
    ///   that cannot run, an executor that cannot take the loop (a dedicated
    ///   thread the system refuses, a pool that was shut down), a per-start
    ///   feedback with no environment. Nothing was started then: no effect
    ///   was called, and nothing is left to stop.
    /// - Returns: the running loop; it stops when ``SpinLoop/stop(_:)`` is
    ///   called or when the last reference to it goes away.
    public func start(options: SpinOptions = .init()) throws(SpinExecutorError) -> SpinLoop<State, Event> {
        try SpinLoop.start(spin: self, options: options)
    }

    /// Starts a loop running this spin with `feedbacks` added for this start
    /// only, after the spin's own: how one spin definition, started many
    /// times, gives each start its own environment — a channel, a
    /// connection id — without being rebuilt. The added feedbacks capture
    /// it; everything else (the reducer, the spin's feedbacks and
    /// observers) is shared by every start.
    /// - Parameters:
    ///   - options: the executor, queue and tuning for this loop.
    ///   - feedbacks: this start's own feedbacks; each sees the initial state
    ///     first, as every feedback does.
    /// - Throws: ``SpinExecutorError`` when the loop cannot start, as
    ///   ``start(options:)``.
    /// - Returns: the running loop.
    public func start(
        options: SpinOptions = .init(), adding feedbacks: [Feedback<State, Event>]
    ) throws(SpinExecutorError) -> SpinLoop<State, Event> {
        try addingFeedbacks(feedbacks).start(options: options)
    }
}
