// The other ways to route an effect: by extractor, by predicate and by
// value, with an emitting handler and a queue of your own; and what an
// effect that no route claims becomes: an error for `onEffectError`.

// snippet.hide
import Dispatch
import Spindle

struct Search: Sendable, Equatable {
    var query = ""
    var results: [String] = []
    var unsaved = false
    var saves = 0
}

enum SearchEvent: Sendable {
    case typed(String)
    case loaded([String])
    case save
    case saved
}

enum SearchEffect: Sendable, Equatable {
    case fetch(String)
    case store([String])
    case log(String)
}

@Sendable func searchNext(_ state: Search, _ event: SearchEvent) -> Next<Search, SearchEffect> {
    var state = state
    switch event {
    case .typed(let query):
        state.query = query
        return .next(state, effects: [.log("search \(query)"), .fetch(query)])
    case .loaded(let results):
        state.results = results
        state.unsaved = true
        return .next(state)
    case .save:
        state.unsaved = false
        return .next(state, effects: [.store(state.results)])
    case .saved:
        state.saves += 1
        return .next(state)
    }
}

@Sendable func fetchResults(_ query: String) async throws -> [String] {
    try await Task.sleep(for: .milliseconds(10))  // stands in for a network call
    return ["\(query) 1", "\(query) 2"]
}
// snippet.show

// snippet.routes
let storage = DispatchQueue(label: "storage")  // serial

let router = EffectRouter<SearchEffect, SearchEvent>()  // named "EffectRouter<SearchEffect, SearchEvent>"
    // An extractor finds the payload; an emitting handler sends any number of events.
    .route({ effect -> String? in if case .fetch(let query) = effect { query } else { nil } },
           emitting: { query, emitter in
               emitter.emit(.loaded(try await fetchResults(query)))
           })
    // A predicate; the synchronous handler runs on a serial queue of yours.
    .route(where: { if case .store = $0 { true } else { false } }, on: storage) { _ in
        .saved
    }
    // A value, for an Equatable effect.
    .routeEffects(equalTo: .log("search swift")) {
        print("searched for swift")
        return nil
    }
// snippet.end

// snippet.hide
let (reports, reported) = AsyncStream.makeStream(of: String.self)
// snippet.show

// snippet.errors
let options = SpinOptions(onEffectError: { error in
    // An effect no route claims: reported, counted, and the loop goes on.
    if let unhandled = error.underlying as? UnhandledEffectError {
        print("\(error.router ?? "a feedback"): no route for \(unhandled.effect)")
        // snippet.hide
        reported.yield("\(unhandled.effect)")
        // snippet.show
    }
})
// snippet.end

// snippet.hide
let loop = Spin(initialState: Search()) {
    Feedback(effect: { (state: Search) -> SearchEvent? in state.unsaved ? .save : nil })
    Reducer(searchNext, effects: router)
}.start(options: options)

let states = loop.states()
loop.emit(.typed("swift"))
for await state in states where state.saves == 1 { break }
// No route claims .log("search rust"): the hook hears of it.
loop.emit(.typed("rust"))
for await state in states where state.saves == 2 { break }
var unclaimed: String?
for await effect in reports {
    unclaimed = effect
    break
}
await loop.stop()

precondition(loop.state.results == ["rust 1", "rust 2"], "the emitting handler's event was not reduced")
precondition(unclaimed == #"log("search rust")"#, "the unclaimed effect did not reach onEffectError")
precondition(loop.statistics.unhandledEffects == 1, "the unclaimed effect was not counted")
precondition(router.name == "EffectRouter<SearchEffect, SearchEvent>", "the default name changed")
// snippet.show
