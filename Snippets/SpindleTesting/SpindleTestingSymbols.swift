// A router misconfigured on purpose, caught by the deterministic runner:
// `TestSpin.ambiguousEffectRoutes` lists each effect that more than one
// route claims, with those routes; the first of them handles it, once.
import Spindle
import SpindleTesting
// snippet.hide

struct Cart: Equatable, Sendable {
    var items: [String] = []
    var saves = 0
}

enum CartEvent: Equatable, Sendable {
    case add(String)
    case saved
}

enum CartEffect: Equatable, Sendable {
    case save([String])
    case log(String)
}

@Sendable func cartNext(_ state: Cart, _ event: CartEvent) -> Next<Cart, CartEffect> {
    var state = state
    switch event {
    case .add(let item):
        state.items.append(item)
        return .next(state, effects: [.save(state.items)])
    case .saved:
        state.saves += 1
        return .next(state)
    }
}
// snippet.show

// snippet.ambiguous
// A catch-all belongs in fallback(on:handler:): as a route, it claims every effect.
let router = EffectRouter<CartEffect, CartEvent>(name: "cart")
    .routeCase(CartEffect.save) { _ in .saved }                     // route 0
    .routeCase(CartEffect.log) { line in print(line); return nil }  // route 1
    .route(where: { _ in true }) { _ in nil }                       // route 2: a catch-all

let runner = TestSpin(Spin(initialState: Cart()) {
    Reducer(cartNext, effects: router)
})
runner.send(.add("tea"))  // dispatches .save(["tea"]), which routes 0 and 2 claim

let ambiguous = runner.ambiguousEffectRoutes.map(\.routes)  // [[0, 2]]: route 0 handles it
// snippet.end
// snippet.hide
precondition(ambiguous == [[0, 2]], "routes 0 and 2 should claim the save, not \(ambiguous)")
precondition(
    runner.ambiguousEffectRoutes.first?.router == "cart",
    "the error should name the router: \(runner.ambiguousEffectRoutes)")
precondition(runner.runUntilIdle() == .settled, "the runner should settle")
precondition(runner.state == Cart(items: ["tea"], saves: 1), "route 0 handles the save once: \(runner.state)")
let started = runner.effectLog.startedRuns()
precondition(started == [TestEffectRun(effect: 0, route: 0, state: 1)], "one run, on route 0: \(started)")
precondition(runner.unhandledEffects(as: CartEffect.self).isEmpty, "an ambiguous effect is handled, not unhandled")
// snippet.show
