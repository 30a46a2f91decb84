// How SpindleTesting's `TestSpin` runs a reducer with effects: it asks the
// reducer for `routedNext`, which reduces and claims each effect by its
// route exactly as a loop's `EffectDispatcher` does, and then runs the
// claimed handlers itself, on its own executor. `package`: for that runner
// only, not part of the public API.

/// One reduction of a reducer with effects, routed but not run: the next
/// state, and each effect with the route that claims it.
///
/// Thread safety: a value; `Sendable` when the state is.
package struct RoutedNext<State, Event> {
    /// The next state, or nil to keep the current one.
    package let state: State?
    /// The reduction's effects, in the order the reducer listed them.
    package let effects: [RoutedEffect<Event>]
}

extension RoutedNext: Sendable where State: Sendable {}

/// One effect, claimed (or not) by the first route of its router that
/// matches it, in the order the routes were added (or by the fallback).
///
/// Thread safety: a value; `Sendable`.
package struct RoutedEffect<Event>: Sendable {
    /// A claimed effect's handler, bound to its payload.
    package enum Handler: Sendable {
        /// A synchronous handler; the event it returns, if any, is emitted.
        case sync(@Sendable () -> Event?)
        /// An async or emitting handler: run it as a task, giving it the
        /// function that emits its events.
        case async(@Sendable (_ emit: @escaping @Sendable (Event) -> EmitResult) async throws -> Void)
    }

    /// The effect value.
    package let effect: any Sendable
    /// The index of the route that claims it; nil: no route does (unhandled).
    package let route: Int?
    /// The claiming route's handler; nil when unhandled.
    package let handler: Handler?
    /// When several routes claim the effect, the error a loop reports.
    package let ambiguity: AmbiguousEffectRouteError?
}

extension EffectRouter {
    /// Claims `effect` as a loop's dispatcher does (see `claim`). Runs the
    /// extractors; must be called where the reducer would run them.
    func routed(_ effect: Effect) -> RoutedEffect<Event> {
        let claim = claim(effect)
        let ambiguity = claim.ambiguity
        guard let (index, job) = claim.handler else {
            return RoutedEffect(effect: effect, route: nil, handler: nil, ambiguity: ambiguity)
        }
        switch job {
        case .sync(let handler):
            return RoutedEffect(effect: effect, route: index, handler: .sync(handler), ambiguity: ambiguity)
        case .async(let body):
            return RoutedEffect(effect: effect, route: index, handler: .async { emit in
                try await body(EventEmitter(emit))
            }, ambiguity: ambiguity)
        }
    }
}

extension Reducer {
    /// For a reducer with effects (`Reducer(_:effects:)`): reduces and
    /// routes one event without running any handler; nil for a plain
    /// reducer. SpindleTesting's `TestSpin` runs the claimed handlers itself.
    package var routedNext: (@Sendable (State, Event) -> RoutedNext<State, Event>)? {
        loopEffects?.routed
    }
}
