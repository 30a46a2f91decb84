import Spindle
import SpindleTesting
import Testing

/// A lookup box with effects as data: typing dispatches a search effect,
/// whose handler answers with the results; saving dispatches a store effect.
struct Lookup: Equatable, Sendable {
    var query = ""
    var results: [String] = []
    var saved = false
    var stores = 0
}

enum LookupEvent: Equatable, Sendable {
    case typed(String)
    case loaded(query: String, results: [String])
    case gaveUp(String)
    case logged(String)
    case save
    case saved
}

enum LookupEffect: Equatable, Sendable {
    case search(String)
    case log(String)
    case store([String])
    case track(String)
}

struct LookupFailure: Error, Equatable {}

/// Effects whose cases carry several values, or none.
enum Shape: Equatable, Sendable {
    case move(x: Int, y: Int)
    case resize(Int, Int)
    case named(String)
    case rename(to: String)
    case clear
}

@Sendable func lookupNext(_ state: Lookup, _ event: LookupEvent) -> Next<Lookup, LookupEffect> {
    var state = state
    switch event {
    case .typed(let query):
        state.query = query
        state.results = []
        return .next(state, effects: [.search(query)])
    case .loaded(let query, let results):
        guard query == state.query else { return .noChange }  // a stale answer
        state.results = results
        state.saved = false
        return .next(state)
    case .gaveUp, .logged:
        return .noChange
    case .save:
        state.saved = true
        return .next(state, effects: [.store(state.results)])
    case .saved:
        state.stores += 1
        return .next(state)
    }
}

/// `lookupNext`, but typing dispatches four effects for four routes.
@Sendable func fourEffectsNext(_ state: Lookup, _ event: LookupEvent) -> Next<Lookup, LookupEffect> {
    guard case .typed(let query) = event else { return lookupNext(state, event) }
    return .next(Lookup(query: query), effects: [.log("a"), .search(query), .track(query), .log("b")])
}

/// `lookupNext`, but typing dispatches a log effect and a track effect.
@Sendable func logAndTrackNext(_ state: Lookup, _ event: LookupEvent) -> Next<Lookup, LookupEffect> {
    guard case .typed(let query) = event else { return lookupNext(state, event) }
    return .next(Lookup(query: query), effects: [.log(query), .track(query)])
}

@Sendable func searchQuery(_ effect: LookupEffect) -> String? {
    if case .search(let query) = effect { query } else { nil }
}

@Sendable func logLine(_ effect: LookupEffect) -> String? {
    if case .log(let line) = effect { line } else { nil }
}

@Sendable func storedResults(_ effect: LookupEffect) -> [String]? {
    if case .store(let results) = effect { results } else { nil }
}

/// The search route: waits 300 ms on `clock` (a debounce, or the network),
/// then answers.
func searchRouter(clock: TestClock) -> EffectRouter<LookupEffect, LookupEvent> {
    EffectRouter<LookupEffect, LookupEvent>()
        .route(searchQuery) { query in
            try await clock.sleep(for: .milliseconds(300))
            return .loaded(query: query, results: ["\(query) 1", "\(query) 2"])
        }
}

@Suite struct TestSpinEffectsTests {
    /// The log entries of one run, as text.
    func entries(_ runner: TestSpin<Lookup, LookupEvent>, _ run: TestEffectRun) -> [String] {
        runner.effectLog.filter { $0.run == run }.map(\.description)
    }

    @Test func anAsyncRouteSleepsOnTheTestClockThenItsEventIsReduced() throws {
        let clock = TestClock()
        let runner = TestSpin(Spin(initialState: Lookup()) {
            Reducer(lookupNext, effects: searchRouter(clock: clock))
        })
        runner.send(.typed("sw"))
        #expect(runner.effects(as: LookupEffect.self) == [.search("sw")])
        #expect(runner.runUntilIdle() == .settled)  // the handler sleeps on the test clock
        let run = TestEffectRun(effect: 0, route: 0, state: 1)
        #expect(runner.activeRuns == [run])

        clock.advance(by: .milliseconds(299))
        #expect(runner.state == Lookup(query: "sw"))
        clock.advance(by: .milliseconds(1))  // wakes; its event is reduced
        try runner.expectStates([
            Lookup(),
            Lookup(query: "sw"),
            Lookup(query: "sw", results: ["sw 1", "sw 2"]),
        ])
        #expect(entries(runner, run) == [
            "effect 0 on route 0 @ state 1: dispatched search(\"sw\")",
            "effect 0 on route 0 @ state 1: started",
            "effect 0 on route 0 @ state 1: emitted loaded(query: \"sw\", results: [\"sw 1\", \"sw 2\"])",
            "effect 0 on route 0 @ state 1: finished",
        ])
        #expect(runner.activeRuns.isEmpty)
        #expect(runner.runUntilIdle() == .settled)
    }

    @Test func stopCancelsADebouncingHandlerAndDiscardsWhatItEmitsAfterwards() throws {
        let clock = TestClock()
        let router = EffectRouter<LookupEffect, LookupEvent>()
            .route(searchQuery, emitting: { query, emitter in
                do {
                    try await clock.sleep(for: .milliseconds(300))  // debounce
                } catch {
                    emitter.emit(.gaveUp(query))  // after stop: discarded
                    throw error
                }
                emitter.emit(.loaded(query: query, results: [query]))
            })
        let runner = TestSpin(Spin(initialState: Lookup()) { Reducer(lookupNext, effects: router) })

        runner.send(.typed("s"))
        clock.advance(by: .milliseconds(200))
        runner.send(.typed("sw"))              // a second handler; the first is not overtaken
        clock.advance(by: .milliseconds(100))  // the first wakes; its answer is stale
        #expect(runner.state == Lookup(query: "sw"))
        #expect(runner.effectLog.emittedEvents() == [.loaded(query: "s", results: ["s"])])

        runner.stop()                          // the second is still sleeping
        clock.advance(by: .seconds(1))
        #expect(runner.runUntilIdle() == .settled)
        try runner.expectState(Lookup(query: "sw"))
        let second = TestEffectRun(effect: 1, route: 0, state: 2)
        #expect(runner.effectLog.cancelledRuns() == [second])
        #expect(runner.effectLog.discardedEvents() == [.gaveUp("sw")])
        #expect(entries(runner, second).suffix(3) == [
            "effect 1 on route 0 @ state 2: cancelled",
            "effect 1 on route 0 @ state 2: discarded gaveUp(\"sw\")",
            "effect 1 on route 0 @ state 2: finished",  // it threw CancellationError
        ])
        #expect(runner.activeRuns.isEmpty)

        // After stop the loop refuses events, as a stopped loop's emit
        // does: nothing is reduced, nothing dispatched.
        let logged = runner.effectLog.count
        #expect(runner.send(.typed("swift")) == Lookup(query: "sw"))
        #expect(runner.events.count == 3)
        #expect(runner.effects(as: LookupEffect.self).count == 2)
        #expect(runner.effectLog.count == logged)
    }

    @Test func effectsAreDispatchedInOrderToTheRouteThatClaimsThemOrTheFallback() {
        let clock = TestClock()
        let router = EffectRouter<LookupEffect, LookupEvent>()
            .route(searchQuery) { query in
                try await clock.sleep(for: .milliseconds(10))
                return .loaded(query: query, results: [])
            }
            .route(logLine) { line in .logged(line) }
            .fallback { _ in .logged("catch-all") }
        let runner = TestSpin(Spin(initialState: Lookup()) { Reducer(fourEffectsNext, effects: router) })
        runner.send(.typed("q"))
        #expect(runner.effects(as: LookupEffect.self) == [.log("a"), .search("q"), .track("q"), .log("b")])
        #expect(runner.effectLog.startedRuns() == [
            TestEffectRun(effect: 0, route: 1, state: 1),
            TestEffectRun(effect: 1, route: 0, state: 1),
            TestEffectRun(effect: 2, route: 2, state: 1),
            TestEffectRun(effect: 3, route: 1, state: 1),
        ])
        // Sync handlers ran at once, in order; the async one sleeps.
        #expect(runner.pendingEvents == [.logged("a"), .logged("catch-all"), .logged("b")])
        clock.advance(by: .milliseconds(10))
        #expect(runner.events == [
            .typed("q"), .logged("a"), .logged("catch-all"), .logged("b"), .loaded(query: "q", results: []),
        ])
        #expect(runner.unhandledEffects(as: LookupEffect.self).isEmpty)
        #expect(runner.ambiguousEffectRoutes.isEmpty)
    }

    @Test func routeCaseTellsApartCasesWhosePayloadsHaveTheSameType() {
        // `.log`, `.search` and `.track` all carry a String.
        let router = EffectRouter<LookupEffect, LookupEvent>()
            .routeCase(LookupEffect.log) { line in .logged("log \(line)") }
            .routeCase(LookupEffect.track) { query in .logged("track \(query)") }
        let runner = TestSpin(Spin(initialState: Lookup()) { Reducer(fourEffectsNext, effects: router) })
        runner.send(.typed("q"))
        #expect(runner.runUntilIdle() == .settled)
        #expect(runner.effectLog.startedRuns() == [
            TestEffectRun(effect: 0, route: 0, state: 1),
            TestEffectRun(effect: 2, route: 1, state: 1),
            TestEffectRun(effect: 3, route: 0, state: 1),
        ])
        #expect(runner.events.dropFirst() == [.logged("log a"), .logged("track q"), .logged("log b")])
        #expect(runner.unhandledEffects(as: LookupEffect.self) == [.search("q")])
        #expect(runner.ambiguousEffectRoutes.isEmpty)
    }

    @Test func routeCaseTakesALabelledValueOrATupleForACaseWithSeveralValues() {
        let router = EffectRouter<Shape, String>()
            .routeCase({ (to: (x: Int, y: Int)) in Shape.move(x: to.x, y: to.y) }) { to in "moved to \(to.x),\(to.y)" }
            .routeCase({ (size: (Int, Int)) in Shape.resize(size.0, size.1) }) { size in "resized to \(size.0)x\(size.1)" }
            .routeCase(Shape.rename(to:)) { name in "renamed to \(name)" }
            .routeEffects(equalTo: .clear) { "cleared" }
        let runner = TestSpin(Spin(initialState: [String]()) {
            Reducer({ (log: [String], event: String) -> Next<[String], Shape> in
                event == "go"
                    ? .dispatch([.move(x: 1, y: 2), .resize(3, 4), .named("n"), .rename(to: "r"), .clear])
                    : .next(log + [event])
            }, effects: router)
        })
        runner.send("go")
        #expect(runner.runUntilIdle() == .settled)
        // `.rename(to:)`'s one labelled value is not confused with `.named`'s.
        #expect(runner.state == ["moved to 1,2", "resized to 3x4", "renamed to r", "cleared"])
        #expect(runner.unhandledEffects(as: Shape.self) == [.named("n")])
    }

    @Test func anEffectTwoRoutesClaimIsRecordedAsAmbiguousAndRunOnTheFirst() throws {
        let router = EffectRouter<LookupEffect, LookupEvent>(name: "lookup")
            .routeCase(LookupEffect.track) { query in .logged("track \(query)") }
            .routeCase(LookupEffect.log) { line in .logged("first \(line)") }
            .route(where: { if case .log = $0 { true } else { false } }) { _ in .logged("second") }
        let runner = TestSpin(Spin(initialState: Lookup()) { Reducer(logAndTrackNext, effects: router) })
        runner.send(.typed("q"))
        #expect(runner.runUntilIdle() == .settled)
        let ambiguous = try #require(runner.ambiguousEffectRoutes.first)
        #expect(runner.ambiguousEffectRoutes.count == 1)
        #expect(ambiguous.effect as? LookupEffect == .log("q") && ambiguous.routes == [1, 2])
        #expect(ambiguous.router == "lookup")
        #expect(runner.effectLog.startedRuns() == [
            TestEffectRun(effect: 0, route: 1, state: 1),
            TestEffectRun(effect: 1, route: 0, state: 1),
        ])
        #expect(runner.events.dropFirst() == [.logged("first q"), .logged("track q")])
    }

    @Test func anEffectNoRouteClaimsIsRecordedAsUnhandled() {
        let router = EffectRouter<LookupEffect, LookupEvent>().route(logLine) { _ in nil }
        let runner = TestSpin(Spin(initialState: Lookup()) { Reducer(logAndTrackNext, effects: router) })
        runner.send(.typed("q"))
        #expect(runner.runUntilIdle() == .settled)
        #expect(runner.unhandledEffects(as: LookupEffect.self) == [.track("q")])
        let unhandled = TestEffectRun(effect: 1, route: nil, state: 1)
        #expect(runner.effectLog.unhandledRuns() == [unhandled])
        #expect(entries(runner, unhandled) == [
            "effect 1 on no route @ state 1: dispatched track(\"q\")",
            "effect 1 on no route @ state 1: unhandled (no route claims it)",
        ])
        #expect(runner.effectLog.startedRuns() == [TestEffectRun(effect: 0, route: 0, state: 1)])
    }

    @Test func aHandlerErrorIsRecordedAndTheSpinGoesOn() {
        let router = EffectRouter<LookupEffect, LookupEvent>()
            .route(searchQuery) { query -> LookupEvent? in
                if query == "boom" { throw LookupFailure() }
                return .loaded(query: query, results: [query])
            }
        let runner = TestSpin(Spin(initialState: Lookup()) { Reducer(lookupNext, effects: router) })
        runner.send(.typed("boom"))
        #expect(runner.runUntilIdle() == .settled)
        let failures = runner.effectLog.failures()
        #expect(failures.map(\.run) == [TestEffectRun(effect: 0, route: 0, state: 1)])
        #expect(failures.first?.error is LookupFailure)

        runner.send(.typed("ok"))
        #expect(runner.runUntilIdle() == .settled)
        #expect(runner.state == Lookup(query: "ok", results: ["ok"]))
    }

    @Test func effectsAndOrdinaryFeedbacksRunInOneSpin() throws {
        let clock = TestClock()
        let router = searchRouter(clock: clock)
            .route(storedResults) { _ in .saved }
        let runner = TestSpin(Spin(initialState: Lookup()) {
            // State-driven: saves loaded results.
            Feedback(effect: { (state: Lookup) -> LookupEvent? in
                !state.results.isEmpty && !state.saved ? .save : nil
            })
            Reducer(lookupNext, effects: router)
        })
        runner.send(.typed("sw"))
        clock.advance(by: .milliseconds(300))
        #expect(runner.runUntilIdle() == .settled)
        #expect(runner.events == [
            .typed("sw"), .loaded(query: "sw", results: ["sw 1", "sw 2"]), .save, .saved,
        ])
        try runner.expectState(Lookup(query: "sw", results: ["sw 1", "sw 2"], saved: true, stores: 1))
        #expect(runner.effects(as: LookupEffect.self) == [.search("sw"), .store(["sw 1", "sw 2"])])
        // The feedback's runs and the router's runs share one log.
        #expect(runner.effectLog.startedRuns().filter(\.isEffectRouterRun) == [
            TestEffectRun(effect: 0, route: 0, state: 1),
            TestEffectRun(effect: 1, route: 1, state: 3),
        ])
        #expect(runner.effectLog.startedRuns().filter { !$0.isEffectRouterRun }.count == 5)  // one per state
    }

    /// Regression: `TestSpin` reduced with `Reducer.reduce`, which for a
    /// reducer with effects computes the state only, so the effects were
    /// dropped without a word and their handlers' events never came.
    @Test func aReducerWithEffectsNoLongerDropsItsEffectsRegression() {
        let router = EffectRouter<LookupEffect, LookupEvent>()
            .route(searchQuery) { query in .loaded(query: query, results: [query]) }
        let runner = TestSpin(Spin(initialState: Lookup()) { Reducer(lookupNext, effects: router) })
        runner.send(.typed("sw"))
        #expect(runner.runUntilIdle() == .settled)
        #expect(runner.effects(as: LookupEffect.self) == [.search("sw")])
        #expect(runner.state == Lookup(query: "sw", results: ["sw"]))
        #expect(runner.effectLog.emittedEvents() == [.loaded(query: "sw", results: ["sw"])])
    }

    @Test func aPlainReducerDispatchesNoEffects() {
        let runner = TestSpin(Spin(initialState: Search()) { Reducer(searchReducer) })
        runner.send(.typed("s"))
        #expect(runner.effects(as: Never.self).isEmpty)
        #expect(runner.effectLog.isEmpty)
    }
}
