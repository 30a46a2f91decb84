/// One effect run under a ``TestSpin`` or a ``TestFeedback``: which feedback
/// ran, for which state — or, for a spin whose reducer has effects
/// (`Reducer(_:effects:)`), which effect the router handled, on which route.
///
/// **Thread safety:** a value type; `Sendable`.
public struct TestEffectRun: Sendable, Hashable, CustomStringConvertible {
    /// The feedback's index in the spin's feedbacks (declaration order); 0
    /// for a ``TestFeedback``; ``effectRouter`` (-1) for a run of the
    /// spin's effect router.
    public let feedback: Int
    /// The index of the state that started the run, in the runner's
    /// `states`. A stream feedback's single run, and a gear feedback's
    /// attachment, start with the first state: 0. For a run of the effect
    /// router, the state the reduction that dispatched the effect produced.
    public let state: Int
    /// For a run of the effect router: the effect's index among every
    /// effect dispatched (see ``TestSpin/effects(as:)``); nil for a
    /// feedback's run.
    public let effect: Int?
    /// For a run of the effect router: the index of the route that claimed
    /// the effect (0-based, in the order the routes were added); nil for an
    /// unhandled effect and for a feedback's run.
    public let route: Int?

    /// The ``feedback`` of the effect router's runs: the router is not one
    /// of the spin's feedbacks.
    public static let effectRouter = -1

    /// Creates the identifier of a feedback's run (for comparisons in tests).
    public init(feedback: Int, state: Int) {
        self.feedback = feedback
        self.state = state
        effect = nil
        route = nil
    }

    /// Creates the identifier of an effect router's run (for comparisons in
    /// tests): the handling of effect number `effect`, dispatched by the
    /// reduction that produced state `state`, by route `route` (nil: no
    /// route claimed it).
    public init(effect: Int, route: Int?, state: Int) {
        feedback = Self.effectRouter
        self.state = state
        self.effect = effect
        self.route = route
    }

    /// True for a run of the spin's effect router.
    public var isEffectRouterRun: Bool { effect != nil }

    public var description: String {
        guard let effect else { return "feedback \(feedback) @ state \(state)" }
        return "effect \(effect) on \(route.map { "route \($0)" } ?? "no route") @ state \(state)"
    }
}

/// What happened to an effect run, in the order it happened.
///
/// The entries are what the loop's engine reported to the runner (a gear's,
/// what the runner saw of its subscription). Every run starts with
/// ``Kind-swift.enum/started`` and, once its task has ended, has exactly
/// one ``Kind-swift.enum/finished`` or ``Kind-swift.enum/failed(_:)``. A
/// synchronous run starts, emits and finishes at once. The runs that live as
/// long as the loop (a gear's attachment, a stream feedback's run, a pipe
/// feedback's such as SpindleCombine's stream form) are cancelled, then
/// finished, by the stop.
///
/// A run of the effect router (``TestEffectRun/isEffectRouterRun``) is
/// first ``Kind-swift.enum/dispatched(_:)`` (as the reduction routes it),
/// then either started as above once its handler is called, or
/// ``Kind-swift.enum/unhandled`` (no route claims the effect: the run ends
/// there).
///
/// **Thread safety:** a value type; `Sendable`.
public struct EffectLogEntry<Event: Sendable>: Sendable {
    /// The kinds of entries.
    public enum Kind: Sendable {
        /// The reducer dispatched this effect to the effect router (router
        /// runs only; always their first entry).
        case dispatched(any Sendable)
        /// No route claims the dispatched effect: it is not handled (the
        /// engine reports an `UnhandledEffectError`). The run's
        /// last entry.
        case unhandled
        /// The run began (its state passed the feedback's filter; or the
        /// route's handler was called, or its task launched).
        case started
        /// The run emitted an event, which was queued for reduction.
        case emitted(Event)
        /// The run emitted an event after it was cancelled (or after the
        /// runner stopped): discarded, never reduced.
        case discarded(Event)
        /// The loop cancelled the run: a newer state under
        /// `ExecutionStrategy.cancelOnNewState`, or ``TestSpin/stop()``.
        case cancelled
        /// The run's task ended: it returned, or threw `CancellationError`,
        /// or threw anything after it had been cancelled.
        case finished
        /// The run threw an error while not cancelled (the engine reports
        /// such errors to `SpinOptions.onEffectError`; for a
        /// router's handler, wrapped in an `EffectHandlerError`).
        case failed(any Error)
    }

    /// The run.
    public let run: TestEffectRun
    /// What happened to it.
    public let kind: Kind
}

extension EffectLogEntry: CustomStringConvertible {
    public var description: String {
        switch kind {
        case .dispatched(let effect): "\(run): dispatched \(effect)"
        case .unhandled: "\(run): unhandled (no route claims it)"
        case .started: "\(run): started"
        case .emitted(let event): "\(run): emitted \(event)"
        case .discarded(let event): "\(run): discarded \(event)"
        case .cancelled: "\(run): cancelled"
        case .finished: "\(run): finished"
        case .failed(let error): "\(run): failed with \(error)"
        }
    }
}

/// Queries over a runner's effect log.
extension Array {
    /// The runs that started, in order.
    public func startedRuns<Event>() -> [TestEffectRun] where Element == EffectLogEntry<Event> {
        compactMap { if case .started = $0.kind { $0.run } else { nil } }
    }

    /// The runs that were cancelled, in order.
    public func cancelledRuns<Event>() -> [TestEffectRun] where Element == EffectLogEntry<Event> {
        compactMap { if case .cancelled = $0.kind { $0.run } else { nil } }
    }

    /// The effect router's runs whose effect no route claimed, in order.
    public func unhandledRuns<Event>() -> [TestEffectRun] where Element == EffectLogEntry<Event> {
        compactMap { if case .unhandled = $0.kind { $0.run } else { nil } }
    }

    /// The runs that threw (while not cancelled), with their errors, in order.
    public func failures<Event>() -> [(run: TestEffectRun, error: any Error)] where Element == EffectLogEntry<Event> {
        compactMap { if case .failed(let error) = $0.kind { ($0.run, error) } else { nil } }
    }

    /// The events emitted and queued for reduction, in order.
    public func emittedEvents<Event>() -> [Event] where Element == EffectLogEntry<Event> {
        compactMap { if case .emitted(let event) = $0.kind { event } else { nil } }
    }

    /// The events discarded because their run had been cancelled, in order.
    public func discardedEvents<Event>() -> [Event] where Element == EffectLogEntry<Event> {
        compactMap { if case .discarded(let event) = $0.kind { event } else { nil } }
    }

    /// The entries of one run, in order.
    public func entries<Event>(of run: TestEffectRun) -> [EffectLogEntry<Event>.Kind] where Element == EffectLogEntry<Event> {
        filter { $0.run == run }.map(\.kind)
    }
}
