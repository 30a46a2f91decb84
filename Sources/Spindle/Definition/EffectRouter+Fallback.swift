import Dispatch

// The fallback route: a router's catch-all, offered only the effects no
// other route claims, so that a catch-all is not an ambiguity.

extension EffectRouter {
    /// Adds the fallback route, with a synchronous handler: it takes every
    /// effect that no other route claims (so none is unhandled), and only
    /// those, wherever it stands in the chain.
    ///
    /// A router has at most one fallback. Its index (in
    /// ``EffectHandlerError/routeIndex`` and the test runner's logs) is its
    /// position in the order the routes were added.
    /// - Parameters:
    ///   - queue: a serial queue for the handler; nil: the loop's queue
    ///     (``SpinExecutor/queue(_:)``), or a serial queue of the route's
    ///     own.
    ///   - handler: performs the effect; the event it returns, if any, is
    ///     emitted into the loop.
    /// - Returns: this router with the fallback added.
    /// - Precondition: the router has no fallback yet.
    public func fallback(
        on queue: DispatchQueue? = nil,
        handler: @escaping @Sendable (Effect) -> Event?
    ) -> Self {
        addingFallback(on: queue) { effect in .sync { handler(effect) } }
    }

    /// Adds the fallback route, with an async handler (see
    /// `fallback(on:handler:)`).
    /// - Parameters:
    ///   - queue: the serial queue the handler is called on (its task runs there after its first suspension too).
    ///   - handler: performs the effect; the event it returns, if any, is
    ///     emitted.
    /// - Returns: this router with the fallback added.
    /// - Precondition: the router has no fallback yet.
    public func fallback(
        on queue: DispatchQueue? = nil,
        handler: @escaping @Sendable (Effect) async throws -> Event?
    ) -> Self {
        addingFallback(on: queue) { effect in
            .async { emitter in
                if let event = try await handler(effect) { emitter.emit(event) }
            }
        }
    }

    /// Adds the fallback route, with an emitting handler (see
    /// `fallback(on:handler:)`).
    /// - Parameters:
    ///   - queue: the serial queue the handler is called on (its task runs there after its first suspension too).
    ///   - handler: performs the effect, emitting events as it goes.
    /// - Returns: this router with the fallback added.
    /// - Precondition: the router has no fallback yet.
    public func fallback(
        on queue: DispatchQueue? = nil,
        emitting handler: @escaping @Sendable (Effect, EventEmitter<Event>) async throws -> Void
    ) -> Self {
        addingFallback(on: queue) { effect in .async { emitter in try await handler(effect, emitter) } }
    }
}
