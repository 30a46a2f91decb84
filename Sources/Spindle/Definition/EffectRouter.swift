import Dispatch

/// Maps effect values (from a reducer returning ``Next``) to the handlers
/// that perform them, and feeds the handlers' events back into the loop.
///
/// Build a router by chaining routes. Each route claims the effects it
/// handles (by enum case, by value, by extractor or by predicate) and has a
/// handler: synchronous
/// `(Payload) -> Event?`, asynchronous `(Payload) async throws -> Event?`, or
/// emitting `(Payload, EventEmitter<Event>) async throws -> Void` for several
/// events.
///
/// @Snippet(path: "Spindle/Snippets/Spindle/EffectsAsData", slice: "router")
///
/// An enum case is routed by its constructor, without spelling the payload
/// type: `.routeCase(SearchEffect.fetch) { query in … }` (see
/// `routeCase(_:on:handler:)` for how and its limits). Otherwise, pass an
/// extractor, a predicate, or (for an `Equatable` effect) a value:
///
/// @Snippet(path: "Spindle/Snippets/Spindle/EffectsAsData", slice: "routes")
///
/// Each effect should be claimed by exactly one route. An effect that no
/// route claims goes to the `fallback(on:handler:)` route if there is one;
/// otherwise it is reported as an ``UnhandledEffectError`` through
/// ``SpinOptions/onEffectError`` and counted: never dropped silently.
///
/// > Important: An effect that two or more routes claim is a configuration
/// > error: it is handled by the first of them, in the order they were
/// > added, and reported as an ``AmbiguousEffectRouteError`` naming them all
/// > (through ``SpinOptions/onEffectError``, like an unhandled effect). It
/// > is never handled twice. A catch-all belongs in `fallback(on:handler:)`,
/// > which makes no ambiguity.
///
/// The router's ``name`` appears in every error it reports
/// (``EffectError/router``), so a spin's log says which router failed.
///
/// - Complexity: Each effect is offered to every route (to find a second
///   claimant), O(routes) extractor calls per effect, on the reducer thread.
///
/// A router is a value: each loop started from a spin gets its own runtime
/// (its own route queues, pending effects and handler tasks).
///
/// > Important: Within one loop, effects are dispatched in the order the
/// > reducer listed them, and across reductions in reduction order. Each
/// > route runs its synchronous handlers one at a time, in that order, on its
/// > queue (the one given with `on:` — it must be serial —, else the loop's
/// > queue when it runs on ``SpinExecutor/queue(_:)``, else a serial queue
/// > of its own per loop); the events they return are reduced in that
/// > order. Async and emitting handlers are called on the route's queue in
/// > that order, each as its own `Task` run there up to its first
/// > suspension, and then run concurrently (on the route's queue when you
/// > named one, else on the global executor): the order in which they
/// > proceed and finish, and so the order of their events, is not promised.
///
/// > Important: Stopping the loop discards the effects whose handler has not
/// > been called (counted in ``LoopStatistics/effectsDiscardedAtStop``),
/// > cancels the running async handlers, and rejects every event a handler
/// > emits afterwards (``EmitResult/stopped``). A handler call in progress
/// > (an async one up to its first suspension) is not interrupted: the
/// > loop's `stop()` returns after it, and no handler is called after that.
/// > Every dispatched effect is handled, reported unhandled, or counted
/// > discarded.
///
/// Extractors and predicates run on the loop's reducer thread, as part of the
/// reduction: they must be pure and cheap. Handlers never run there.
///
/// Thread safety: a value; build it on any thread and share it freely.
public struct EffectRouter<Effect: Sendable, Event: Sendable>: Sendable {
    /// One route: where it runs, and how it claims an effect (returning the
    /// handler bound to the effect's payload, or nil to pass).
    struct Route: Sendable {
        let queue: DispatchQueue?
        let claim: @Sendable (Effect) -> EffectJob<Event>?
    }

    /// The router's name, as its errors report it (``EffectError/router``).
    public let name: String
    /// The routes, in the order they were added (the order of their indices).
    let routes: [Route]
    /// The index in `routes` of the fallback route, which claims every
    /// effect and is offered only those no other route claims; nil: none.
    let fallbackIndex: Int?

    /// Creates a router with no route (every effect is unhandled), named
    /// after its types: `EffectRouter<SearchEffect, SearchEvent>`.
    public init() {
        self.init(name: "EffectRouter<\(Effect.self), \(Event.self)>")
    }

    /// Creates a router with no route (every effect is unhandled).
    /// - Parameter name: how the router's errors name it (for example
    ///   `"search"`), in ``EffectError/router`` and in the loop's log.
    public init(name: String) {
        self.init(name: name, routes: [], fallbackIndex: nil)
    }

    private init(name: String, routes: [Route], fallbackIndex: Int?) {
        self.name = name
        self.routes = routes
        self.fallbackIndex = fallbackIndex
    }

    func adding(on queue: DispatchQueue?, _ claim: @escaping @Sendable (Effect) -> EffectJob<Event>?) -> Self {
        EffectRouter(name: name, routes: routes + [Route(queue: queue, claim: claim)], fallbackIndex: fallbackIndex)
    }

    func addingFallback(on queue: DispatchQueue?, _ job: @escaping @Sendable (Effect) -> EffectJob<Event>) -> Self {
        precondition(fallbackIndex == nil, "Spindle: the effect router \"\(name)\" already has a fallback route")
        return EffectRouter(
            name: name,
            routes: routes + [Route(queue: queue, claim: { job($0) })],
            fallbackIndex: routes.count)
    }

    /// The number of routes, the fallback included.
    public var count: Int { routes.count }

    // MARK: Routes by extraction

    /// Adds a route with a synchronous handler, run on the route's queue.
    /// - Parameters:
    ///   - extract: the payload of the effects this route handles; nil passes
    ///     the effect to the next route. Runs on the reducer thread.
    ///   - queue: a serial queue for the handler; nil: the loop's queue
    ///     (``SpinExecutor/queue(_:)``), or a serial queue of the route's
    ///     own.
    ///   - handler: performs the effect; the event it returns, if any, is
    ///     emitted into the loop.
    /// - Returns: this router with the route added last.
    public func route<Payload: Sendable>(
        _ extract: @escaping @Sendable (Effect) -> Payload?,
        on queue: DispatchQueue? = nil,
        handler: @escaping @Sendable (Payload) -> Event?
    ) -> Self {
        adding(on: queue) { effect in
            guard let payload = extract(effect) else { return nil }
            return .sync { handler(payload) }
        }
    }

    /// Adds a route with an async handler, called on the route's queue as a
    /// `Task` (see the type's ordering note). A thrown error is reported as an ``EffectHandlerError``.
    /// - Parameters:
    ///   - extract: the payload of the effects this route handles; nil passes
    ///     the effect to the next route. Runs on the reducer thread.
    ///   - queue: the serial queue the handler is called on (its task runs there after its first suspension too).
    ///   - handler: performs the effect; the event it returns, if any, is
    ///     emitted (and rejected if the loop stopped meanwhile).
    /// - Returns: this router with the route added last.
    public func route<Payload: Sendable>(
        _ extract: @escaping @Sendable (Effect) -> Payload?,
        on queue: DispatchQueue? = nil,
        handler: @escaping @Sendable (Payload) async throws -> Event?
    ) -> Self {
        adding(on: queue) { effect in
            guard let payload = extract(effect) else { return nil }
            return .async { emitter in
                if let event = try await handler(payload) { emitter.emit(event) }
            }
        }
    }

    /// Adds a route whose handler emits any number of events through an
    /// ``EventEmitter`` until it returns; called like an async handler.
    /// - Parameters:
    ///   - extract: the payload of the effects this route handles; nil passes
    ///     the effect to the next route. Runs on the reducer thread.
    ///   - queue: the serial queue the handler is called on (its task runs there after its first suspension too).
    ///   - handler: performs the effect, emitting events as it goes.
    /// - Returns: this router with the route added last.
    public func route<Payload: Sendable>(
        _ extract: @escaping @Sendable (Effect) -> Payload?,
        on queue: DispatchQueue? = nil,
        emitting handler: @escaping @Sendable (Payload, EventEmitter<Event>) async throws -> Void
    ) -> Self {
        adding(on: queue) { effect in
            guard let payload = extract(effect) else { return nil }
            return .async { emitter in try await handler(payload, emitter) }
        }
    }

    // MARK: Routes by predicate

    /// Adds a route, with a synchronous handler, for the effects that
    /// `predicate` accepts. For a catch-all, use
    /// `fallback(on:handler:)`: a predicate that
    /// accepts what another route claims makes those effects ambiguous.
    /// - Parameters:
    ///   - predicate: true for the effects this route handles. Runs on the
    ///     reducer thread.
    ///   - queue: a serial queue for the handler; nil: the loop's queue
    ///     (``SpinExecutor/queue(_:)``), or a serial queue of the route's
    ///     own.
    ///   - handler: performs the effect; the event it returns, if any, is
    ///     emitted into the loop.
    /// - Returns: this router with the route added last.
    public func route(
        where predicate: @escaping @Sendable (Effect) -> Bool,
        on queue: DispatchQueue? = nil,
        handler: @escaping @Sendable (Effect) -> Event?
    ) -> Self {
        route({ predicate($0) ? $0 : nil }, on: queue, handler: handler)
    }

    /// Adds a route, with an async handler, for the effects that `predicate`
    /// accepts.
    /// - Parameters:
    ///   - predicate: true for the effects this route handles.
    ///   - queue: the serial queue the handler is called on (its task runs there after its first suspension too).
    ///   - handler: performs the effect; the event it returns, if any, is
    ///     emitted.
    /// - Returns: this router with the route added last.
    public func route(
        where predicate: @escaping @Sendable (Effect) -> Bool,
        on queue: DispatchQueue? = nil,
        handler: @escaping @Sendable (Effect) async throws -> Event?
    ) -> Self {
        route({ predicate($0) ? $0 : nil }, on: queue, handler: handler)
    }

    /// Adds a route, with an emitting handler, for the effects that
    /// `predicate` accepts.
    /// - Parameters:
    ///   - predicate: true for the effects this route handles.
    ///   - queue: the serial queue the handler is called on (its task runs there after its first suspension too).
    ///   - handler: performs the effect, emitting events as it goes.
    /// - Returns: this router with the route added last.
    public func route(
        where predicate: @escaping @Sendable (Effect) -> Bool,
        on queue: DispatchQueue? = nil,
        emitting handler: @escaping @Sendable (Effect, EventEmitter<Event>) async throws -> Void
    ) -> Self {
        route({ predicate($0) ? $0 : nil }, on: queue, emitting: handler)
    }

    // MARK: Claiming

    /// How a router's routes claim one effect.
    struct Claim {
        /// The route that handles the effect, and its handler bound to the
        /// effect's payload; nil: unhandled.
        let handler: (route: Int, job: EffectJob<Event>)?
        /// When more than one route (the fallback aside) claims the effect,
        /// the error naming all of them, in order; otherwise nil.
        let ambiguity: AmbiguousEffectRouteError?
    }

    /// Offers `effect` to every route: the first claimant handles it, the
    /// fallback takes it if none does, and two claimants are an ambiguity.
    /// Runs the extractors; call it where the reducer would run them.
    /// - Complexity: O(routes) extractor calls.
    func claim(_ effect: Effect) -> Claim {
        var first: (route: Int, job: EffectJob<Event>)?
        var ambiguous: [Int] = []
        for index in routes.indices where index != fallbackIndex {
            guard let job = routes[index].claim(effect) else { continue }
            guard let claimed = first else {
                first = (index, job)
                continue
            }
            if ambiguous.isEmpty { ambiguous.append(claimed.route) }
            ambiguous.append(index)
        }
        if first == nil, let fallbackIndex, let job = routes[fallbackIndex].claim(effect) {
            first = (fallbackIndex, job)
        }
        let ambiguity = ambiguous.isEmpty
            ? nil : AmbiguousEffectRouteError(effect: effect, routes: ambiguous, router: name)
        return Claim(handler: first, ambiguity: ambiguity)
    }
}

/// A claimed effect's handler, bound to its payload.
enum EffectJob<Event: Sendable>: Sendable {
    /// Runs on the route's queue; its event (if any) is emitted.
    case sync(@Sendable () -> Event?)
    /// Runs as a Task called on the route's queue, emitting through the
    /// emitter.
    case async(@Sendable (EventEmitter<Event>) async throws -> Void)
}
