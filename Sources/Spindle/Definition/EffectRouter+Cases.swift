import Dispatch

// Routes named by an enum case (Mobius's `routeCase(Effect.fetch)`) or by an
// effect value (`routeEffects(equalTo:)`), so that the payload's type is
// inferred instead of written in an extractor.

extension EffectRouter {
    // MARK: Routes by enum case

    /// Adds a route, with a synchronous handler, for the effects of one enum
    /// case, named by its constructor: `.routeCase(SearchEffect.fetch) { query in … }`.
    ///
    /// The case's payload is found by reflection: the effect's `Mirror`
    /// gives its case label and associated value; the value must be a
    /// `Payload`, and `embed(value)` must have the same case label, so two
    /// cases with the same payload type (`.fetch(String)`, `.log(String)`)
    /// are told apart.
    ///
    /// Limits: `Effect` must be an enum whose reflection is not customised
    /// (no `CustomReflectable`), and the case must have one associated value,
    /// labelled or not (`Effect.fetch(query:)`); for several, pass a closure
    /// taking a tuple: `{ (page: (id: Int, number: Int)) in
    /// .load(id: page.id, number: page.number) }`. Cases that share a base
    /// name and a payload type, differing only by argument label, are not
    /// told apart.
    ///
    /// - Parameters:
    ///   - embed: the case's constructor, `Effect.someCase`. Called on the
    ///     reducer thread, with a payload extracted from an effect.
    ///   - queue: a serial queue for the handler; nil: the loop's queue
    ///     (``SpinExecutor/queue(_:)``), or a serial queue of the route's
    ///     own.
    ///   - handler: performs the effect, given its payload; the event it
    ///     returns, if any, is emitted into the loop.
    /// - Returns: this router with the route added last.
    /// - Complexity: one `Mirror` of each effect offered to the route, one
    ///   more of its associated value when that is not a `Payload`, and one
    ///   of `embed(payload)` when it is. Allocates; on the reducer thread.
    public func routeCase<Payload: Sendable>(
        _ embed: @escaping @Sendable (Payload) -> Effect,
        on queue: DispatchQueue? = nil,
        handler: @escaping @Sendable (Payload) -> Event?
    ) -> Self {
        route({ Self.payload(of: $0, as: embed) }, on: queue, handler: handler)
    }

    /// Adds a route, with an async handler, for the effects of one enum case,
    /// named by its constructor (see
    /// `routeCase(_:on:handler:)` for how the case
    /// is matched, and its limits). A thrown error is reported as an
    /// ``EffectHandlerError``.
    /// - Parameters:
    ///   - embed: the case's constructor, `Effect.someCase`.
    ///   - queue: the serial queue the handler is called on (its task runs there after its first suspension too).
    ///   - handler: performs the effect, given its payload; the event it
    ///     returns, if any, is emitted.
    /// - Returns: this router with the route added last.
    public func routeCase<Payload: Sendable>(
        _ embed: @escaping @Sendable (Payload) -> Effect,
        on queue: DispatchQueue? = nil,
        handler: @escaping @Sendable (Payload) async throws -> Event?
    ) -> Self {
        route({ Self.payload(of: $0, as: embed) }, on: queue, handler: handler)
    }

    /// Adds a route, with an emitting handler, for the effects of one enum
    /// case, named by its constructor (see
    /// `routeCase(_:on:handler:)`).
    /// - Parameters:
    ///   - embed: the case's constructor, `Effect.someCase`.
    ///   - queue: the serial queue the handler is called on (its task runs there after its first suspension too).
    ///   - handler: performs the effect, given its payload, emitting events
    ///     as it goes.
    /// - Returns: this router with the route added last.
    public func routeCase<Payload: Sendable>(
        _ embed: @escaping @Sendable (Payload) -> Effect,
        on queue: DispatchQueue? = nil,
        emitting handler: @escaping @Sendable (Payload, EventEmitter<Event>) async throws -> Void
    ) -> Self {
        route({ Self.payload(of: $0, as: embed) }, on: queue, emitting: handler)
    }

    /// The associated value of `effect` when `effect` is the case `embed`
    /// builds; nil otherwise.
    static func payload<Payload>(of effect: Effect, as embed: (Payload) -> Effect) -> Payload? {
        let mirror = Mirror(reflecting: effect)
        guard mirror.displayStyle == .enum,
              let child = mirror.children.first,
              let label = child.label,
              let payload = cast(child.value, to: Payload.self)
        else { return nil }
        // Same payload type is not enough: `.log("a")` holds a String too.
        guard Mirror(reflecting: embed(payload)).children.first?.label == label else { return nil }
        return payload
    }

    /// `value` as a `Payload`. Reflection shows the value of a case with one
    /// labelled associated value, `fetch(query: String)`, as a one-element
    /// tuple `(query: String)`, which no cast unwraps: its element is taken.
    private static func cast<Payload>(_ value: Any, to type: Payload.Type) -> Payload? {
        if let payload = value as? Payload { return payload }
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .tuple, mirror.children.count == 1 else { return nil }
        return mirror.children.first?.value as? Payload
    }
}

extension EffectRouter where Effect: Equatable {
    // MARK: Routes by value

    /// Adds a route, with a synchronous handler, for the effects equal to
    /// `value`: typically a case without payload,
    /// `.routeEffects(equalTo: .logSearch) { … }`.
    /// - Parameters:
    ///   - value: the effect this route handles.
    ///   - queue: a serial queue for the handler; nil: the loop's queue
    ///     (``SpinExecutor/queue(_:)``), or a serial queue of the route's
    ///     own.
    ///   - handler: performs the effect; the event it returns, if any, is
    ///     emitted into the loop.
    /// - Returns: this router with the route added last.
    public func routeEffects(
        equalTo value: Effect,
        on queue: DispatchQueue? = nil,
        handler: @escaping @Sendable () -> Event?
    ) -> Self {
        route(where: { $0 == value }, on: queue) { _ in handler() }
    }

    /// Adds a route, with an async handler, for the effects equal to `value`.
    /// A thrown error is reported as an ``EffectHandlerError``.
    /// - Parameters:
    ///   - value: the effect this route handles.
    ///   - queue: the serial queue the handler is called on (its task runs there after its first suspension too).
    ///   - handler: performs the effect; the event it returns, if any, is
    ///     emitted.
    /// - Returns: this router with the route added last.
    public func routeEffects(
        equalTo value: Effect,
        on queue: DispatchQueue? = nil,
        handler: @escaping @Sendable () async throws -> Event?
    ) -> Self {
        route(where: { $0 == value }, on: queue) { (_: Effect) async throws -> Event? in try await handler() }
    }

    /// Adds a route, with an emitting handler, for the effects equal to
    /// `value`.
    /// - Parameters:
    ///   - value: the effect this route handles.
    ///   - queue: the serial queue the handler is called on (its task runs there after its first suspension too).
    ///   - handler: performs the effect, emitting events as it goes.
    /// - Returns: this router with the route added last.
    public func routeEffects(
        equalTo value: Effect,
        on queue: DispatchQueue? = nil,
        emitting handler: @escaping @Sendable (EventEmitter<Event>) async throws -> Void
    ) -> Self {
        route(where: { $0 == value }, on: queue, emitting: { _, emitter in try await handler(emitter) })
    }
}
