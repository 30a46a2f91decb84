// The four forms of a `Next`, the step a reducer with effects returns: a new
// state with effects, a new state alone, effects alone, and nothing.

// snippet.hide
import Spindle
import Synchronization

struct Search: Equatable, Sendable {
    var query = ""
    var loading = false
    var results: [String] = []
}

enum SearchEvent: Sendable {
    case typed(String)
    case loaded([String])
    case retry
    case ignored
}

enum SearchEffect: Equatable, Sendable {
    case fetch(String)
}
// snippet.show

// snippet.next
@Sendable func reduce(_ state: Search, _ event: SearchEvent) -> Next<Search, SearchEffect> {
    switch event {
    case .typed(let query):
        return .next(Search(query: query, loading: true), effects: [.fetch(query)])
    case .loaded(let results):
        return .next(Search(query: state.query, results: results))
    case .retry:
        return .dispatch([.fetch(state.query)])
    case .ignored:
        return .noChange
    }
}
// snippet.end

// snippet.hide
// The reducer is pure: each form is a plain value.
let loading = Search(query: "swift", loading: true)
precondition(reduce(Search(), .typed("swift")) == Next(state: loading, effects: [.fetch("swift")]), ".next with effects")
precondition(reduce(loading, .loaded(["a"])) == Next(state: Search(query: "swift", results: ["a"]), effects: []), ".next alone")
precondition(reduce(loading, .retry) == Next(state: nil, effects: [.fetch("swift")]), ".dispatch keeps the state")
precondition(reduce(loading, .ignored) == Next(state: nil, effects: []), ".noChange keeps the state, dispatches nothing")
precondition(!reduce(loading, .retry).hasState && reduce(loading, .typed("x")).hasState, "hasState")

// In a loop: each effect goes to the route that claims it, and a step
// without a state keeps the current one.
let fetches = Mutex<[String]>([])
let router = EffectRouter<SearchEffect, SearchEvent>(name: "search")
    .routeCase(SearchEffect.fetch) { (query: String) -> SearchEvent? in
        let count = fetches.withLock { fetched in
            fetched.append(query)
            return fetched.count
        }
        return .loaded(["\(query) \(count)"])
    }
let loop = try Spin(initialState: Search()) {
    Reducer(reduce, effects: router)
}.start()
let states = loop.states()
loop.emit(.typed("swift"))
for await state in states where state.results == ["swift 1"] { break }
loop.emit(.ignored)
loop.emit(.retry)
for await state in states where state.results == ["swift 2"] { break }
await loop.stop()
precondition(loop.state == Search(query: "swift", results: ["swift 2"]), "the retry kept the query: \(loop.state)")
precondition(fetches.withLock { $0 } == ["swift", "swift"], "the router got both fetches")
precondition(loop.statistics.reducedEvents == 5, "typed, loaded, ignored, retry, loaded")
precondition(loop.statistics.effectsDispatched == 2, "two fetches dispatched")
precondition(loop.statistics.unhandledEffects == 0, "every effect was routed")
// snippet.show
