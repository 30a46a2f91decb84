import Dispatch

/// What a `Feedback(effect:filteredByResult:)` filter
/// returns for a state whose effect must not run (Spin.Swift's name).
public enum FeedbackFilterError: Error, Sendable, Hashable {
    /// The state is filtered out: no run starts and none is cancelled.
    case effectIsNotExecuted
}

// Lenses given as closures, lenses combined with filters, and filters that
// extract a part of the state (Spin.Swift's `filteredByResult:`), for the
// synchronous, async and `AsyncSequence` effect forms. A lens and a filter
// run on the thread that hands the feedback its states (the loop's executor,
// or the feedback's queue) and should be cheap and pure: with a filter, the
// lens may run twice per state.
extension Feedback {
    // MARK: Closure lenses

    /// Creates a feedback whose effect sees only a part of the state, given
    /// by a closure.
    /// - Parameters:
    ///   - effect: called with the part of each state.
    ///   - lens: extracts the part.
    ///   - queue: where the effect runs; nil means the loop's executor.
    ///   - strategy: what a new state does to a running effect.
    public init<Sub>(
        effect: @escaping @Sendable (Sub) -> Event?,
        lensingOn lens: @escaping @Sendable (State) -> Sub,
        on queue: DispatchQueue? = nil,
        applying strategy: ExecutionStrategy = .cancelOnNewState
    ) {
        self.init(effect: { effect(lens($0)) }, on: queue, applying: strategy)
    }

    /// Creates an async feedback whose effect sees only a part of the state,
    /// given by a closure.
    public init<Sub: Sendable>(
        effect: @escaping @Sendable (Sub) async throws -> Event?,
        lensingOn lens: @escaping @Sendable (State) -> Sub,
        on queue: DispatchQueue? = nil,
        applying strategy: ExecutionStrategy = .cancelOnNewState
    ) {
        self.init(effect: { try await effect(lens($0)) }, on: queue, applying: strategy)
    }

    /// Creates an `AsyncSequence` feedback whose effect sees only a part of
    /// the state, given by a closure.
    public init<Sub, Events: AsyncSequence & SendableMetatype>(
        effect: @escaping @Sendable (Sub) -> Events,
        lensingOn lens: @escaping @Sendable (State) -> Sub,
        on queue: DispatchQueue? = nil,
        applying strategy: ExecutionStrategy = .cancelOnNewState
    ) where Events.Element == Event {
        self.init(effect: { effect(lens($0)) }, on: queue, applying: strategy)
    }

    // MARK: Lens and filter

    /// Creates a feedback whose effect sees only a part of the state, and
    /// runs only when that part satisfies `predicate`. A filtered-out state
    /// starts nothing and cancels nothing.
    /// - Parameters:
    ///   - effect: called with the part of each state that passes.
    ///   - lens: the part, as a key path.
    ///   - predicate: whether the effect runs for this part.
    ///   - queue: where the effect runs; nil means the loop's executor.
    ///   - strategy: what a new state does to a running effect.
    public init<Sub>(
        effect: @escaping @Sendable (Sub) -> Event?,
        lensingOn lens: KeyPath<State, Sub> & Sendable,
        filteredBy predicate: @escaping @Sendable (Sub) -> Bool,
        on queue: DispatchQueue? = nil,
        applying strategy: ExecutionStrategy = .cancelOnNewState
    ) {
        self.init(effect: { effect($0[keyPath: lens]) }, filteredBy: { predicate($0[keyPath: lens]) },
                  on: queue, applying: strategy)
    }

    /// A feedback on a part of the state, given by a closure, run only when
    /// that part satisfies `predicate`.
    public init<Sub>(
        effect: @escaping @Sendable (Sub) -> Event?,
        lensingOn lens: @escaping @Sendable (State) -> Sub,
        filteredBy predicate: @escaping @Sendable (Sub) -> Bool,
        on queue: DispatchQueue? = nil,
        applying strategy: ExecutionStrategy = .cancelOnNewState
    ) {
        self.init(effect: { effect(lens($0)) }, filteredBy: { predicate(lens($0)) }, on: queue, applying: strategy)
    }

    /// An async feedback on a part of the state (a key path), run only when
    /// that part satisfies `predicate`.
    public init<Sub: Sendable>(
        effect: @escaping @Sendable (Sub) async throws -> Event?,
        lensingOn lens: KeyPath<State, Sub> & Sendable,
        filteredBy predicate: @escaping @Sendable (Sub) -> Bool,
        on queue: DispatchQueue? = nil,
        applying strategy: ExecutionStrategy = .cancelOnNewState
    ) {
        self.init(effect: { try await effect($0[keyPath: lens]) }, filteredBy: { predicate($0[keyPath: lens]) },
                  on: queue, applying: strategy)
    }

    /// An async feedback on a part of the state (a closure lens), run only
    /// when that part satisfies `predicate`.
    public init<Sub: Sendable>(
        effect: @escaping @Sendable (Sub) async throws -> Event?,
        lensingOn lens: @escaping @Sendable (State) -> Sub,
        filteredBy predicate: @escaping @Sendable (Sub) -> Bool,
        on queue: DispatchQueue? = nil,
        applying strategy: ExecutionStrategy = .cancelOnNewState
    ) {
        self.init(effect: { try await effect(lens($0)) }, filteredBy: { predicate(lens($0)) }, on: queue, applying: strategy)
    }

    /// An `AsyncSequence` feedback on a part of the state (a key path), run
    /// only when that part satisfies `predicate`.
    public init<Sub, Events: AsyncSequence & SendableMetatype>(
        effect: @escaping @Sendable (Sub) -> Events,
        lensingOn lens: KeyPath<State, Sub> & Sendable,
        filteredBy predicate: @escaping @Sendable (Sub) -> Bool,
        on queue: DispatchQueue? = nil,
        applying strategy: ExecutionStrategy = .cancelOnNewState
    ) where Events.Element == Event {
        self.init(effect: { effect($0[keyPath: lens]) }, filteredBy: { predicate($0[keyPath: lens]) },
                  on: queue, applying: strategy)
    }

    /// An `AsyncSequence` feedback on a part of the state (a closure lens),
    /// run only when that part satisfies `predicate`.
    public init<Sub, Events: AsyncSequence & SendableMetatype>(
        effect: @escaping @Sendable (Sub) -> Events,
        lensingOn lens: @escaping @Sendable (State) -> Sub,
        filteredBy predicate: @escaping @Sendable (Sub) -> Bool,
        on queue: DispatchQueue? = nil,
        applying strategy: ExecutionStrategy = .cancelOnNewState
    ) where Events.Element == Event {
        self.init(effect: { effect(lens($0)) }, filteredBy: { predicate(lens($0)) }, on: queue, applying: strategy)
    }

    // MARK: Filters that extract (Spin.Swift's "Result based filter")

    /// Creates a feedback whose filter both selects the states the effect
    /// runs for and extracts what it needs from them: `.success(part)` runs
    /// the effect with `part`, `.failure` skips the state (no run starts,
    /// none is cancelled).
    /// - Parameters:
    ///   - effect: called with the part of each selected state.
    ///   - filter: selects and extracts.
    ///   - queue: where the effect runs; nil means the loop's executor.
    ///   - strategy: what a new state does to a running effect.
    public init<Sub>(
        effect: @escaping @Sendable (Sub) -> Event?,
        filteredByResult filter: @escaping @Sendable (State) -> Result<Sub, FeedbackFilterError>,
        on queue: DispatchQueue? = nil,
        applying strategy: ExecutionStrategy = .cancelOnNewState
    ) {
        self.init(
            effect: { state in
                guard case .success(let part) = filter(state) else { return nil }
                return effect(part)
            },
            filteredBy: Self.selects(filter),
            on: queue, applying: strategy)
    }

    /// The async form of `init(effect:filteredByResult:on:applying:)`.
    public init<Sub: Sendable>(
        effect: @escaping @Sendable (Sub) async throws -> Event?,
        filteredByResult filter: @escaping @Sendable (State) -> Result<Sub, FeedbackFilterError>,
        on queue: DispatchQueue? = nil,
        applying strategy: ExecutionStrategy = .cancelOnNewState
    ) {
        self.init(
            effect: { state in
                guard case .success(let part) = filter(state) else { return nil }
                return try await effect(part)
            },
            filteredBy: Self.selects(filter),
            on: queue, applying: strategy)
    }

    /// The `AsyncSequence` form of `init(effect:filteredByResult:on:applying:)`.
    public init<Sub, Events: AsyncSequence & SendableMetatype>(
        effect: @escaping @Sendable (Sub) -> Events,
        filteredByResult filter: @escaping @Sendable (State) -> Result<Sub, FeedbackFilterError>,
        on queue: DispatchQueue? = nil,
        applying strategy: ExecutionStrategy = .cancelOnNewState
    ) where Events.Element == Event {
        self.init(
            effect: .sequence({ state, emitter in
                guard case .success(let part) = filter(state) else { return }
                for try await event in effect(part) {
                    if await !emitter.send(event) { return }
                }
            }),
            filter: Self.selects(filter),
            queue: queue, strategy: strategy)
    }

    // The predicate of a Result filter: the states it extracts a part from.
    private static func selects<Sub>(
        _ filter: @escaping @Sendable (State) -> Result<Sub, FeedbackFilterError>
    ) -> @Sendable (State) -> Bool {
        { state in
            if case .success = filter(state) { true } else { false }
        }
    }
}
