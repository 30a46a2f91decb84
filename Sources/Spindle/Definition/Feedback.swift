import Dispatch

/// A feedback: the only place where a spin has side effects. It watches the
/// loop's states and emits events back into the loop.
///
/// An effect can be a plain closure `(State) -> Event?`, an async function
/// `(State) async -> Event?` (optionally throwing), or a function returning an
/// `AsyncSequence` of events. A feedback that names no queue runs on the
/// loop's executor (the shared reducer pool by default; see
/// ``SpinOptions/executor``), right after each reduction, in declaration
/// order; one given a queue with `on:` / ``execute(on:)`` runs its effect
/// code on that queue, whatever the form. Either way it sees the initial
/// state first, then every new state in reduction order.
///
/// > Important: Never block the loop's executor in a feedback that names no
/// > queue: it is shared with other loops (on a pool) or the rest of the app
/// > (on the main queue). Give blocking work a queue with ``execute(on:)``.
///
/// > Important: With ``ExecutionStrategy/cancelOnNewState`` (the default), a
/// > new state cancels the previous run, and every event that run emits after
/// > that moment is discarded — even if the effect ignores cancellation.
///
/// Async and stream effects run as `Task`s. With a queue named, the task's
/// code runs on that queue (a task executor over it; code isolated to an
/// actor still hops to its actor); without one, on the global concurrent
/// executor, started from the loop's executor.
public struct Feedback<State: Sendable, Event: Sendable>: Sendable {
    /// What the feedback runs, erased to the forms the runtime knows.
    /// (Package access: SpindleTesting's deterministic runner runs these forms.)
    package enum Effect: Sendable {
        /// Runs synchronously on the feedback's queue (or the reducer thread).
        case sync(@Sendable (State) -> Event?)
        /// Runs as a Task; its event (if any) is emitted when it returns.
        case async(@Sendable (State) async throws -> Event?)
        /// Runs as a Task that emits through the emitter until it returns;
        /// the emitter answers false once the run is cancelled.
        case sequence(@Sendable (State, EffectEmitter<Event>) async throws -> Void)
        /// Not driven by states: subscribes once when the loop starts (e.g.
        /// to a gear) and is unsubscribed when it stops.
        case attached(@Sendable (EffectEmitter<Event>) -> AttachedSubscription)
        /// One run for the loop's whole life, started with the first state:
        /// it reads every state, in order, from the stream, and emits through
        /// the emitter. Stop finishes the stream and cancels the run.
        case stream(@Sendable (AsyncStream<State>, EffectEmitter<Event>) async throws -> Void)
        /// One pipe for the loop's whole life, opened with the first state:
        /// every state is handed to it synchronously, in order, where the
        /// feedback runs (its queue, else the loop's executor), and it
        /// emits through the emitter from wherever it likes. Stop closes
        /// it; its later events are discarded. (A Combine subject's form:
        /// its operators run where the states are sent.)
        case pipe(@Sendable (EffectEmitter<Event>) -> StatePipe<State>)
        /// Not driven by states: one run for the loop's whole life, started
        /// with the first state (which it does not see), emitting through
        /// the emitter. Stop cancels the run.
        case source(@Sendable (EffectEmitter<Event>) async throws -> Void)
        /// Several feedbacks given as one (``Feedback/init(effects:)``). A
        /// spin flattens them into its feedback list, so the engine never
        /// runs this case itself.
        case merged([Feedback<State, Event>])
        /// A feedback made anew for each start, from that start's
        /// environment (``Feedback/withEnvironment(_:_:)``): the start
        /// replaces it with the feedback it makes, so the engine never
        /// runs this case itself. Answers nil when the environment is not
        /// of the type it needs.
        case perStart(EnvironmentFactory<State, Event>)
    }

    package let effect: Effect
    /// States for which the predicate is false are skipped: no run starts and
    /// the previous run is not cancelled.
    package private(set) var filter: (@Sendable (State) -> Bool)?
    package let strategy: ExecutionStrategy
    /// nil: the loop's executor.
    private(set) var queue: DispatchQueue?
    /// Runs on the loop's executor even if a queue was named (see ``executeOnReducerThread()``).
    package internal(set) var runsOnReducerThread: Bool = false
    /// Every state, or only the latest (see ``delivering(_:)``).
    package internal(set) var delivery: StateDelivery = .everyState
    /// A stream-form feedback's buffer: at most this many states wait for
    /// its reader (the oldest are dropped); nil: no bound.
    package var streamBufferLimit: Int?
    /// The synchronous effect again, as the engine calls it on the loop's
    /// executor: it writes the event it returns, if any, into the memory
    /// given (for one `Event`, uninitialized) and says whether it did. Set
    /// only by the inlinable `init(effect:on:applying:)` (see there); nil for
    /// every other form, which the engine calls through `effect`.
    private(set) var syncEffectWritingInto: (@Sendable (State, UnsafeMutableRawPointer) -> Bool)?

    /// This feedback, a gear's (attached), with the emitter its
    /// subscription gets wrapped by `wrap`; any other feedback unchanged.
    /// For SpindleTesting's runner, which logs what a gear emits.
    package func wrappingAttachedEmitter(
        _ wrap: @escaping @Sendable (EffectEmitter<Event>) -> EffectEmitter<Event>
    ) -> Feedback {
        guard case .attached(let subscribe) = effect else { return self }
        var copy = Feedback(effect: .attached({ subscribe(wrap($0)) }), filter: filter, queue: queue, strategy: strategy)
        copy.runsOnReducerThread = runsOnReducerThread
        copy.delivery = delivery
        return copy
    }

    init(
        effect: Effect,
        filter: (@Sendable (State) -> Bool)? = nil,
        queue: DispatchQueue?,
        strategy: ExecutionStrategy
    ) {
        self.effect = effect
        self.filter = filter
        self.queue = queue
        self.strategy = strategy
    }

    /// Creates a feedback from a synchronous effect.
    /// - Parameters:
    ///   - effect: called with each state; the event it returns, if any, is emitted.
    ///   - queue: where the effect runs; nil means the loop's executor.
    ///   - strategy: what a new state does to a running effect.
    @inlinable
    public init(
        effect: @escaping @Sendable (State) -> Event?,
        on queue: DispatchQueue? = nil,
        applying strategy: ExecutionStrategy = .cancelOnNewState
    ) {
        // Inlinable so that this wrapper is compiled in the caller's module,
        // for its concrete types: the engine calls it after each batch, in
        // its own unspecialized generic code, where receiving an `Event?`
        // asks the runtime for `Optional<Event>`'s metadata (a hash-table
        // lookup) on every call.
        self.init(syncEffect: effect, writingInto: { state, destination in
            guard let event = effect(state) else { return false }
            destination.initializeMemory(as: Event.self, to: event)
            return true
        }, queue: queue, strategy: strategy)
    }

    @usableFromInline
    init(
        syncEffect: @escaping @Sendable (State) -> Event?,
        writingInto: @escaping @Sendable (State, UnsafeMutableRawPointer) -> Bool,
        queue: DispatchQueue?,
        strategy: ExecutionStrategy
    ) {
        self.init(effect: .sync(syncEffect), queue: queue, strategy: strategy)
        syncEffectWritingInto = writingInto
    }

    /// Creates a feedback from an async effect, run as a `Task` per state.
    /// It may throw: an error goes to the loop's
    /// ``SpinOptions/onEffectError`` hook, and the loop keeps running.
    /// - Parameters:
    ///   - effect: called with each state; the event it returns, if any, is
    ///     emitted (or discarded when the run was cancelled meanwhile).
    ///   - queue: where the effect's code runs; nil: the global concurrent executor.
    ///   - strategy: what a new state does to a running effect.
    public init(
        effect: @escaping @Sendable (State) async throws -> Event?,
        on queue: DispatchQueue? = nil,
        applying strategy: ExecutionStrategy = .cancelOnNewState
    ) {
        self.init(effect: .async(effect), queue: queue, strategy: strategy)
    }

    /// Creates a feedback from an effect returning an `AsyncSequence` of
    /// events. Each state starts an iteration; with
    /// ``ExecutionStrategy/cancelOnNewState`` the previous iteration is
    /// cancelled and ended. A thrown error goes to ``SpinOptions/onEffectError``.
    public init<Events: AsyncSequence & SendableMetatype>(
        effect: @escaping @Sendable (State) -> Events,
        on queue: DispatchQueue? = nil,
        applying strategy: ExecutionStrategy = .cancelOnNewState
    ) where Events.Element == Event {
        self.init(effect: .sequence(Self.iterating(effect)), queue: queue, strategy: strategy)
    }

    static func iterating<Events: AsyncSequence & SendableMetatype>(
        _ effect: @escaping @Sendable (State) -> Events
    ) -> @Sendable (State, EffectEmitter<Event>) async throws -> Void where Events.Element == Event {
        { state, emitter in
            for try await event in effect(state) {
                if await !emitter.send(event) { return }
            }
        }
    }

    /// The feedbacks this one stands for, in order: itself, or the parts of
    /// a merged feedback (recursively).
    package var flattened: [Feedback] {
        guard case .merged(let parts) = effect else { return [self] }
        return parts.flatMap(\.flattened)
    }

    // For a merged feedback, the same with `transform` applied to every
    // part (what a modifier does to a merged feedback); for a per-start
    // feedback, the same with `transform` applied to what it makes; nil
    // otherwise.
    private func mappingParts(_ transform: @escaping @Sendable (Feedback) -> Feedback) -> Feedback? {
        switch effect {
        case .merged(let parts):
            return Feedback(effect: .merged(parts.map(transform)), queue: nil, strategy: strategy)
        case .perStart(let factory):
            return Feedback(effect: .perStart(factory.mapping(transform)), queue: nil, strategy: strategy)
        default:
            return nil
        }
    }

    /// Returns this feedback run only for states that satisfy `predicate`:
    /// any form — sync, async, sequence, stream, renderer, gear. A
    /// filtered-out state is not handed to the effect at all: it starts
    /// nothing and cancels nothing (a stream effect's sequence does not
    /// yield it). Under ``StateDelivery/latestState`` the predicate sees the
    /// state the feedback gets, after conflation: a state that passes may be
    /// replaced by a newer one that does not, and then no call is made for
    /// either. A feedback filtered twice runs for states that satisfy both
    /// predicates. For a merged feedback (``init(effects:)``),
    /// every part is filtered.
    ///
    /// The predicate runs where the feedback runs (its queue, else the
    /// loop's executor), once per state: keep it cheap and pure.
    public func filtered(by predicate: @escaping @Sendable (State) -> Bool) -> Feedback {
        if let merged = mappingParts({ $0.filtered(by: predicate) }) { return merged }
        var copy = self
        if let existing = filter {
            copy.filter = { existing($0) && predicate($0) }
        } else {
            copy.filter = predicate
        }
        return copy
    }

    /// Returns this feedback running on `queue` (this also undoes
    /// ``executeOnReducerThread()``). For a merged feedback
    /// (``init(effects:)``), every part runs on `queue`.
    public func execute(on queue: DispatchQueue) -> Feedback {
        if let merged = mappingParts({ $0.execute(on: queue) }) { return merged }
        var copy = self
        copy.queue = queue
        copy.runsOnReducerThread = false
        return copy
    }

    /// Returns this feedback handed the states `delivery` says: every state
    /// (the default), or only the latest (``StateDelivery/latestState``), a
    /// renderer's choice under a busy loop: it never falls behind by more
    /// than one state, and it always gets the latest.
    ///
    /// @Snippet(path: "Spindle/Snippets/Spindle/FeedbackFormsQueues", slice: "latest")
    ///
    /// > Important: With ``StateDelivery/latestState`` the feedback may skip
    /// > states (never the initial one, never the latest one while the loop
    /// > runs), never gets a state twice, and what it gets stays in
    /// > reduction order. A feedback
    /// > on the loop's executor runs once per batch, after the batch's
    /// > reductions, with its last state. For a merged feedback
    /// > (``init(effects:)``) every part is conflated.
    ///
    /// - Parameter delivery: which states to hand the effect.
    /// - Returns: this feedback with that delivery.
    public func delivering(_ delivery: StateDelivery) -> Feedback {
        if let merged = mappingParts({ $0.delivering(delivery) }) { return merged }
        var copy = self
        copy.delivery = delivery
        return copy
    }

    /// Returns this feedback running synchronously on the loop's executor,
    /// right after each reduction (the placement of a feedback that names no
    /// queue): no dispatch, no thread hop; it undoes ``execute(on:)``. For
    /// cheap synchronous effects only; a slow effect here slows the whole
    /// loop. Events it emits go to the loop's local queue and are reduced
    /// before the next batch.
    ///
    /// - Precondition: the effect is synchronous (`(State) -> Event?` or
    ///   `(State) -> Void`; for a merged feedback, every part's is).
    public func executeOnReducerThread() -> Feedback {
        if let merged = mappingParts({ $0.executeOnReducerThread() }) { return merged }
        guard case .sync = effect else {
            preconditionFailure("Spindle: only synchronous effects can run on the reducer thread")
        }
        var copy = self
        copy.runsOnReducerThread = true
        return copy
    }
}

/// The runtime's handle for an effect run to emit events.
package struct EffectEmitter<Event: Sendable>: Sendable {
    /// Emits an event; returns false when the run is cancelled or the loop
    /// stopped (the event was discarded) so a sequence can end early. May
    /// block its thread while a `.block` bounded queue is full: for
    /// synchronous callers (a gear's subscriber) only.
    package let emit: @Sendable (Event) -> Bool
    /// The same from a task: suspends, never blocks, while a `.block`
    /// bounded queue is full — the effect's thread may be a cooperative
    /// one that other tasks need.
    package let send: @Sendable (Event) async -> Bool

    package init(emit: @escaping @Sendable (Event) -> Bool) {
        self.emit = emit
        self.send = { emit($0) }
    }

    package init(emit: @escaping @Sendable (Event) -> Bool, send: @escaping @Sendable (Event) async -> Bool) {
        self.emit = emit
        self.send = send
    }
}

/// The open end of a pipe feedback (see `Feedback.Effect.pipe`).
package struct StatePipe<State: Sendable>: Sendable {
    /// Takes one state; called in reduction order by the feedback's runner.
    package let send: @Sendable (State) -> Void
    /// Closes the pipe (the loop stopped). Called once, from any thread.
    package let close: @Sendable () -> Void

    package init(send: @escaping @Sendable (State) -> Void, close: @escaping @Sendable () -> Void) {
        self.send = send
        self.close = close
    }
}

extension Feedback {
    /// A pipe feedback (see `Feedback.Effect.pipe`), for bridges such as
    /// SpindleCombine's stream-form publisher feedback.
    package init(pipe open: @escaping @Sendable (EffectEmitter<Event>) -> StatePipe<State>, on queue: DispatchQueue?) {
        self.init(effect: .pipe(open), queue: queue, strategy: .continueOnNewState)
    }
}

/// A live subscription of an attached feedback (see `Feedback.Effect.attached`).
package struct AttachedSubscription: Sendable {
    /// Detaches, and calls its argument once no code of the attachment runs
    /// any more (an effect router's handler call in progress).
    private let detach: @Sendable (_ done: @escaping @Sendable () -> Void) -> Void

    /// A subscription whose `cancel` leaves nothing running.
    package init(cancel: @escaping @Sendable () -> Void) {
        detach = { done in
            cancel()
            done()
        }
    }

    /// A subscription whose detach may leave code running: it calls `done`
    /// once that code has returned.
    package init(cancelThen detach: @escaping @Sendable (_ done: @escaping @Sendable () -> Void) -> Void) {
        self.detach = detach
    }

    package func cancel() { detach {} }

    /// Detaches; `done` is called once no code of the attachment runs.
    package func cancel(whenDone done: @escaping @Sendable () -> Void) { detach(done) }
}
