/// An effect that no route of the loop's ``EffectRouter`` matches (and the
/// router has no fallback). It is not handled; the loop reports it to
/// ``SpinOptions/onEffectError`` (or its logger), counts it in
/// ``LoopStatistics/unhandledEffects``, and keeps running.
///
/// Reported inside an ``EffectError`` whose ``EffectError/router`` is the
/// router's name.
public struct UnhandledEffectError: Error, Sendable, CustomStringConvertible {
    /// The effect no route matched.
    public let effect: any Sendable
    /// The name of the router (``EffectRouter/name``).
    public let router: String

    public var description: String {
        "no route of the effect router \"\(router)\" matches the effect \(effect)"
    }
}

/// An effect that two or more routes of the loop's ``EffectRouter`` claim: a
/// configuration error (each effect should have exactly one route).
///
/// > Important: The effect is handled by the first of ``routes`` (the
/// > first claimant in the order the routes were added), once, as if it
/// > were the only one; the error is reported to
/// > ``SpinOptions/onEffectError`` (or the loop's logger) inside an
/// > ``EffectError`` whose ``EffectError/router`` is the router's name, once
/// > per such effect. The loop keeps running.
public struct AmbiguousEffectRouteError: Error, Sendable, CustomStringConvertible {
    /// The effect several routes claim.
    public let effect: any Sendable
    /// The positions of the routes that claim it (0-based, in the order
    /// added); the first one handles it.
    public let routes: [Int]
    /// The name of the router (``EffectRouter/name``).
    public let router: String

    public var description: String {
        let list = routes.map(String.init).joined(separator: ", ")
        return "routes \(list) of the effect router \"\(router)\" all match the effect \(effect); route \(routes[0]) handles it"
    }
}

/// An error thrown by an async effect handler, reported to
/// ``SpinOptions/onEffectError`` (or the loop's logger) inside an
/// ``EffectError`` whose ``EffectError/router`` is the router's name. The
/// loop keeps running.
///
/// A `CancellationError`, or any error thrown after the handler was
/// cancelled by stop, is not reported.
public struct EffectHandlerError: Error, Sendable, CustomStringConvertible {
    /// The effect being handled.
    public let effect: any Sendable
    /// The position of the route in its router (0-based, in the order added).
    public let routeIndex: Int
    /// The name of the router (``EffectRouter/name``).
    public let router: String
    /// What the handler threw.
    public let underlying: any Error

    public var description: String {
        "route \(routeIndex) of the effect router \"\(router)\" failed to handle the effect \(effect): \(underlying)"
    }
}
