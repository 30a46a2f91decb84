import Spindle

extension TestSpin {
    /// Every effect the spin's reducer dispatched (a reducer with effects,
    /// `Reducer(_:effects:)`), in dispatch order: the effects of each
    /// reduction in the order the reducer listed them, handled or not. Empty
    /// for a plain reducer. A router run's ``TestEffectRun/effect`` is an
    /// index into this list.
    ///
    /// @Snippet(path: "Spindle/Snippets/SpindleTesting/TestingRunnerEffects", slice: "effects")
    ///
    /// - Parameter type: the spin's effect type.
    /// - Returns: the effects, in order.
    /// - Precondition: `type` is the effect type of the spin's router.
    ///
    /// **Thread safety:** any thread; a snapshot.
    public func effects<Effect: Sendable>(as type: Effect.Type = Effect.self) -> [Effect] {
        driver.books.effects.map { Self.cast($0, to: type) }
    }

    /// The effects that no route of the spin's router claims, in dispatch
    /// order. They are not handled; in the effect log their runs end with
    /// ``EffectLogEntry/Kind-swift.enum/unhandled`` (the engine reports each
    /// as an `UnhandledEffectError`).
    ///
    /// - Parameter type: the spin's effect type.
    /// - Returns: the unhandled effects, in order.
    /// - Precondition: `type` is the effect type of the spin's router.
    ///
    /// **Thread safety:** any thread; a snapshot.
    public func unhandledEffects<Effect: Sendable>(as type: Effect.Type = Effect.self) -> [Effect] {
        driver.books.unhandled.map { Self.cast($0, to: type) }
    }

    /// The effects that more than one route of the spin's router claims,
    /// in dispatch order, each with the routes that claim it: the
    /// configuration errors a loop reports to
    /// `SpinOptions.onEffectError`. As in a loop, each such effect
    /// is handled by the first of its routes (its run in the effect log is
    /// on that route).
    ///
    /// @Snippet(path: "Spindle/Snippets/SpindleTesting/SpindleTestingSymbols", slice: "ambiguous")
    ///
    /// **Thread safety:** any thread; a snapshot.
    public var ambiguousEffectRoutes: [AmbiguousEffectRouteError] {
        driver.books.ambiguous
    }

    private static func cast<Effect>(_ effect: any Sendable, to type: Effect.Type) -> Effect {
        guard let typed = effect as? Effect else {
            preconditionFailure("TestSpin: the spin's effects are \(Swift.type(of: effect)), not \(Effect.self)")
        }
        return typed
    }
}
