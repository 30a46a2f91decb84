/// An effect that no route of the loop's ``EffectRouter`` matches. It is not
/// handled; the loop reports it to ``SpinOptions/onEffectError`` (or its
/// logger), counts it in ``LoopStatistics/unhandledEffects``, and keeps
/// running.
///
/// Reported inside an ``EffectError`` whose `feedbackIndex` is the router's
/// position: `spin.feedbacks.count` (just after the spin's feedbacks).
public struct UnhandledEffectError: Error, Sendable, CustomStringConvertible {
    /// The effect no route matched.
    public let effect: any Sendable

    public var description: String {
        "no route of the effect router matches the effect \(effect)"
    }
}

/// An error thrown by an async effect handler, reported to
/// ``SpinOptions/onEffectError`` (or the loop's logger) inside an
/// ``EffectError`` whose `feedbackIndex` is the router's position
/// (`spin.feedbacks.count`). The loop keeps running.
///
/// A `CancellationError`, or any error thrown after the handler was
/// cancelled by stop, is not reported.
public struct EffectHandlerError: Error, Sendable, CustomStringConvertible {
    /// The effect being handled.
    public let effect: any Sendable
    /// The position of the route in its router (0-based, in the order added).
    public let routeIndex: Int
    /// What the handler threw.
    public let underlying: any Error

    public var description: String {
        "route \(routeIndex) failed to handle the effect \(effect): \(underlying)"
    }
}
