import Dispatch

extension Feedback {
    /// Creates a feedback whose effect runs only for states that satisfy
    /// `predicate`. A filtered-out state starts nothing and cancels nothing.
    public init(
        effect: @escaping @Sendable (State) -> Event?,
        filteredBy predicate: @escaping @Sendable (State) -> Bool,
        on queue: DispatchQueue? = nil,
        applying strategy: ExecutionStrategy = .cancelOnNewState
    ) {
        self.init(effect: .sync(effect), filter: predicate, queue: queue, strategy: strategy)
    }

    /// Creates an async feedback that runs only for states that satisfy
    /// `predicate`.
    public init(
        effect: @escaping @Sendable (State) async throws -> Event?,
        filteredBy predicate: @escaping @Sendable (State) -> Bool,
        on queue: DispatchQueue? = nil,
        applying strategy: ExecutionStrategy = .cancelOnNewState
    ) {
        self.init(effect: .async(effect), filter: predicate, queue: queue, strategy: strategy)
    }

    /// Creates an `AsyncSequence` feedback that runs only for states that
    /// satisfy `predicate`.
    public init<Events: AsyncSequence & SendableMetatype>(
        effect: @escaping @Sendable (State) -> Events,
        filteredBy predicate: @escaping @Sendable (State) -> Bool,
        on queue: DispatchQueue? = nil,
        applying strategy: ExecutionStrategy = .cancelOnNewState
    ) where Events.Element == Event {
        self.init(effect: .sequence(Self.iterating(effect)), filter: predicate, queue: queue, strategy: strategy)
    }

    /// Creates a feedback whose effect sees only a part of the state (a lens,
    /// e.g. a key path `\.user`).
    public init<Sub>(
        effect: @escaping @Sendable (Sub) -> Event?,
        lensingOn lens: KeyPath<State, Sub> & Sendable,
        on queue: DispatchQueue? = nil,
        applying strategy: ExecutionStrategy = .cancelOnNewState
    ) {
        self.init(effect: { effect($0[keyPath: lens]) }, on: queue, applying: strategy)
    }

    /// Creates an async feedback whose effect sees only a part of the state.
    public init<Sub: Sendable>(
        effect: @escaping @Sendable (Sub) async throws -> Event?,
        lensingOn lens: KeyPath<State, Sub> & Sendable,
        on queue: DispatchQueue? = nil,
        applying strategy: ExecutionStrategy = .cancelOnNewState
    ) {
        self.init(effect: { try await effect($0[keyPath: lens]) }, on: queue, applying: strategy)
    }

    /// Creates an `AsyncSequence` feedback whose effect sees only a part of
    /// the state.
    public init<Sub, Events: AsyncSequence & SendableMetatype>(
        effect: @escaping @Sendable (Sub) -> Events,
        lensingOn lens: KeyPath<State, Sub> & Sendable,
        on queue: DispatchQueue? = nil,
        applying strategy: ExecutionStrategy = .cancelOnNewState
    ) where Events.Element == Event {
        self.init(effect: { effect($0[keyPath: lens]) }, on: queue, applying: strategy)
    }
}
