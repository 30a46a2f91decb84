import Dispatch

/// Maps effect values (from a reducer returning ``Next``) to the handlers
/// that perform them, and feeds the handlers' events back into the loop.
///
/// Build a router by chaining routes. Each route has an extractor (or a
/// predicate) that claims the effects it handles and a handler: synchronous
/// `(Payload) -> Event?`, asynchronous `(Payload) async throws -> Event?`, or
/// emitting `(Payload, EventEmitter<Event>) async throws -> Void` for several
/// events.
///
/// ```swift
/// let router = EffectRouter<SearchEffect, SearchEvent>()
///     .route({ if case .fetch(let query) = $0 { query } else { nil } }) { query in
///         .loaded(try await api.search(query))
///     }
///     .route(where: { $0 == .logSearch }) { _ in
///         log("search"); return nil
///     }
/// ```
///
/// An effect goes to the first route, in the order they were added, whose
/// extractor returns a payload (or whose predicate holds). An effect that no
/// route claims is reported as an ``UnhandledEffectError`` through
/// ``SpinOptions/onEffectError`` and counted: never dropped silently.
///
/// A router is a value: each loop started from a spin gets its own runtime
/// (its own route queues, pending effects and handler tasks).
///
/// > Important: Within one loop, effects are dispatched in the order the
/// > reducer listed them, and across reductions in reduction order. Each
/// > route runs its synchronous handlers one at a time, in that order, on its
/// > queue (the one given with `on:` — it must be serial —, else the spin's
/// > `executeOn:` queue, else a serial queue of its own per loop); the events
/// > they return are reduced in that order. Async and emitting handlers are
/// > launched from the route's queue in that order, each as its own `Task`,
/// > and then run concurrently: the order in which they proceed and finish,
/// > and so the order of their events, is not promised.
///
/// > Important: Stopping the loop discards the effects whose handler has not
/// > started (counted in ``LoopStatistics/effectsDiscardedAtStop``), cancels
/// > the running async handlers, and rejects every event a handler emits
/// > afterwards (``EmitResult/stopped``). Every dispatched effect is handled,
/// > reported unhandled, or counted discarded.
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

    /// The routes, in the order they were added (the order they are tried).
    let routes: [Route]

    /// Creates a router with no route (every effect is unhandled).
    public init() {
        routes = []
    }

    private init(routes: [Route]) {
        self.routes = routes
    }

    private func adding(on queue: DispatchQueue?, _ claim: @escaping @Sendable (Effect) -> EffectJob<Event>?) -> Self {
        EffectRouter(routes: routes + [Route(queue: queue, claim: claim)])
    }

    /// The number of routes.
    public var count: Int { routes.count }

    // MARK: Routes by extraction

    /// Adds a route with a synchronous handler, run on the route's queue.
    /// - Parameters:
    ///   - extract: the payload of the effects this route handles; nil passes
    ///     the effect to the next route. Runs on the reducer thread.
    ///   - queue: a serial queue for the handler; nil: the spin's
    ///     `executeOn:` queue, or a serial queue of the route's own.
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

    /// Adds a route with an async handler, launched from the route's queue as
    /// a `Task`. A thrown error is reported as an ``EffectHandlerError``.
    /// - Parameters:
    ///   - extract: the payload of the effects this route handles; nil passes
    ///     the effect to the next route. Runs on the reducer thread.
    ///   - queue: the serial queue the handler's task is launched from.
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
    /// ``EventEmitter`` until it returns; launched like an async handler.
    /// - Parameters:
    ///   - extract: the payload of the effects this route handles; nil passes
    ///     the effect to the next route. Runs on the reducer thread.
    ///   - queue: the serial queue the handler's task is launched from.
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
    /// `predicate` accepts (`{ _ in true }` makes a catch-all).
    public func route(
        where predicate: @escaping @Sendable (Effect) -> Bool,
        on queue: DispatchQueue? = nil,
        handler: @escaping @Sendable (Effect) -> Event?
    ) -> Self {
        route({ predicate($0) ? $0 : nil }, on: queue, handler: handler)
    }

    /// Adds a route, with an async handler, for the effects that `predicate`
    /// accepts.
    public func route(
        where predicate: @escaping @Sendable (Effect) -> Bool,
        on queue: DispatchQueue? = nil,
        handler: @escaping @Sendable (Effect) async throws -> Event?
    ) -> Self {
        route({ predicate($0) ? $0 : nil }, on: queue, handler: handler)
    }

    /// Adds a route, with an emitting handler, for the effects that
    /// `predicate` accepts.
    public func route(
        where predicate: @escaping @Sendable (Effect) -> Bool,
        on queue: DispatchQueue? = nil,
        emitting handler: @escaping @Sendable (Effect, EventEmitter<Event>) async throws -> Void
    ) -> Self {
        route({ predicate($0) ? $0 : nil }, on: queue, emitting: handler)
    }
}

/// A claimed effect's handler, bound to its payload.
enum EffectJob<Event: Sendable>: Sendable {
    /// Runs on the route's queue; its event (if any) is emitted.
    case sync(@Sendable () -> Event?)
    /// Runs as a Task launched from the route's queue, emitting through the
    /// emitter.
    case async(@Sendable (EventEmitter<Event>) async throws -> Void)
}
