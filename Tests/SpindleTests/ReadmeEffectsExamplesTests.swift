import Spindle
import Testing

// The README's "Effects as data: Next and an effect router" snippet, as
// written there (the declarations verbatim, the run inside a test).

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

let searchSpin = Spin(initialState: Search()) {
    // An ordinary state-driven feedback, in the same spin.
    Feedback(effect: { (state: Search) -> SearchEvent? in state.unsaved ? .save : nil })
    Reducer(searchNext, effects: searchRouter)
}

@Suite struct ReadmeEffectsExamplesTests {
    @Test func theSearchExampleRunsAsTheReadmeSays() async {
        let search = searchSpin.start()
        search.emit(.typed("swift"))
        for await state in search.states() where state.saves == 1 { break }
        await search.stop()
        // What the README's flow implies: the fetch came back, the feedback
        // asked for a save, the store handler answered.
        #expect(search.state.query == "swift")
        #expect(search.state.results == ["swift 1", "swift 2"])
        #expect(search.state.saves == 1 && !search.state.unsaved)
        let statistics = search.statistics
        #expect(statistics.effectsDispatched == 3)  // .log, .fetch, .store
        #expect(statistics.unhandledEffects == 0)
        // .fetch and .store were handled (their events were reduced); .log
        // runs on a route of its own, so the stop may have found it pending.
        #expect(statistics.effectsHandled + statistics.effectsDiscardedAtStop == 3)
        #expect(statistics.effectsHandled >= 2)
    }

    @Test func theNextTableSaysWhatEachHelperDoes() {
        let start = Search()
        let typed = searchNext(start, .typed("a"))
        #expect(typed == .next(Search(query: "a"), effects: [.log("search a"), .fetch("a")]))
        let loaded = Search(query: "a", results: ["x"], unsaved: true)
        #expect(searchNext(loaded, .save) == .next(Search(query: "a", results: ["x"]), effects: [.store(["x"])]))
        #expect(Next<Search, SearchEffect>.dispatch([.log("x")]).state == nil)
        #expect(Next<Search, SearchEffect>.noChange.effects.isEmpty)
        // `reduce` of the effects form computes the state only.
        #expect(Reducer(searchNext, effects: searchRouter).reduce(start, .typed("a")) == Search(query: "a"))
    }
}
