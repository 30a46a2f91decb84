// A search screen whose reducer returns effects as data: each event gives the
// next state and a list of effect values (a `Next`), and an `EffectRouter`
// performs them: an async fetch, a synchronous store, and a fallback for the
// rest. An ordinary state-driven feedback sits in the same spin.
// Then the other ways to route an effect: by extractor, by predicate and by
// value, with an emitting handler and a queue of your own; and what an
// effect that no route claims becomes: an error for `onEffectError`.

// snippet.hide
import Dispatch
// snippet.show

// snippet.types
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
// snippet.end

// snippet.reducer
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
// snippet.end

// snippet.router
@Sendable func fetchResults(_ query: String) async throws -> [String] {
    try await Task.sleep(for: .milliseconds(10))  // stands in for a network call
    return ["\(query) 1", "\(query) 2"]
}

let searchRouter = EffectRouter<SearchEffect, SearchEvent>(name: "search")
    // async: its answer comes back as an event
    .routeCase(SearchEffect.fetch) { query in
        .loaded(try await fetchResults(query))
    }
    // sync, on the route's own serial queue
    .routeCase(SearchEffect.store) { results in
        print("storing \(results.count) results")
        return .saved
    }
    // every effect no other route claims: log it, no event back
    .fallback { effect in
        print("effect: \(effect)")
        return nil
    }
// snippet.end

// snippet.run
let searchSpin = Spin(initialState: Search()) {
    // An ordinary state-driven feedback, in the same spin.
    Feedback(effect: { (state: Search) -> SearchEvent? in state.unsaved ? .save : nil })
    Reducer(searchNext, effects: searchRouter)
}

let search = try searchSpin.start()
search.emit(.typed("swift"))
for await state in search.states() where state.saves == 1 { break }
await search.stop()
// snippet.end

// snippet.hide
// The flow the article describes: the fetch came back, the feedback asked
// for a save, the store handler answered.
precondition(search.state.query == "swift", "the typed query was not reduced")
precondition(search.state.results == ["swift 1", "swift 2"], "the fetch's answer was not reduced")
precondition(search.state.saves == 1 && !search.state.unsaved, "the save did not go through the store route")
let statistics = search.statistics
precondition(statistics.effectsDispatched == 3, "expected .log, .fetch and .store dispatched")
precondition(statistics.unhandledEffects == 0, "the fallback claims every other effect")
// .fetch and .store were handled (their events were reduced); .log runs on a
// route of its own, so the stop may have found it pending.
precondition(
    statistics.effectsHandled + statistics.effectsDiscardedAtStop == 3,
    "every dispatched effect is handled or counted discarded")
precondition(statistics.effectsHandled >= 2, "the fetch and the store were handled")
// snippet.show

// snippet.testing
// The reducer is pure: test it by comparing the `Next` values it returns.
let typed = searchNext(Search(), .typed("swift"))
precondition(typed == .next(Search(query: "swift"), effects: [.log("search swift"), .fetch("swift")]))

let loaded = Search(query: "swift", results: ["swift 1"], unsaved: true)
precondition(searchNext(loaded, .save) == .next(
    Search(query: "swift", results: ["swift 1"]), effects: [.store(["swift 1"])]))

// `reduce` of a reducer with effects is the state half only.
let reducer = Reducer(searchNext, effects: searchRouter)
precondition(reducer.reduce(Search(), .typed("swift")) == Search(query: "swift"))
// snippet.end

// snippet.hide
// The other two rows of the article's `Next` table.
precondition(Next<Search, SearchEffect>.dispatch([.log("x")]).state == nil, ".dispatch keeps the state")
precondition(Next<Search, SearchEffect>.dispatch([.log("x")]).effects == [.log("x")], ".dispatch dispatches")
precondition(Next<Search, SearchEffect>.noChange.state == nil, ".noChange keeps the state")
precondition(Next<Search, SearchEffect>.noChange.effects.isEmpty, ".noChange dispatches nothing")
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
let loop = try Spin(initialState: Search()) {
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
