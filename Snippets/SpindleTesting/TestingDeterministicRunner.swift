// The deterministic runner: a whole spin on the test's own thread, with a
// virtual clock, every intermediate state and a log of every effect run.
import Spindle
import SpindleTesting
// snippet.hide

struct Levels: Equatable, Sendable {
    var left: Int
    var right: Int
}

enum LevelsEvent: Equatable, Sendable {
    case increaseLeft
    case decreaseRight
}

@Sendable func levelsReducer(_ state: Levels, _ event: LevelsEvent) -> Levels {
    var state = state
    switch event {
    case .increaseLeft: state.left += 1
    case .decreaseRight: state.right -= 1
    }
    return state
}

@Sendable func leftEffect(_ state: Levels) -> LevelsEvent? {
    state.left < state.right ? .increaseLeft : nil
}

@Sendable func rightEffect(_ state: Levels) -> LevelsEvent? {
    state.left < state.right ? .decreaseRight : nil
}

let spin = Spin(initialState: Levels(left: 0, right: 10)) {
    Feedback(effect: leftEffect)
    Feedback(effect: rightEffect)
    Reducer(levelsReducer)
}
// snippet.show

// snippet.searchSpin
struct Search: Equatable, Sendable {
    var query = ""
    var loaded: String?
}

enum SearchEvent: Equatable, Sendable {
    case typed(String)
    case loaded(String)
}

@Sendable func searchReducer(_ state: Search, _ event: SearchEvent) -> Search {
    var state = state
    switch event {
    case .typed(let query): state.query = query
    case .loaded(let query): state.loaded = query
    }
    return state
}

// Production passes ContinuousClock(); tests pass a TestClock.
func searchSpin(clock: some Clock<Duration>) -> Spin<Search, SearchEvent> {
    Spin(initialState: Search()) {
        Feedback(effect: { (state: Search) async throws -> SearchEvent? in
            guard !state.query.isEmpty, state.loaded != state.query else { return nil }
            try await clock.sleep(for: .milliseconds(300))  // debounce
            return .loaded(state.query)
        })
        Reducer(searchReducer)
    }
}
// snippet.end

// snippet.debounceTest
func typingFastLoadsOnlyTheLastQuery() throws {
    let clock = TestClock()
    let runner = TestSpin(searchSpin(clock: clock))

    runner.send(.typed("s"))
    clock.advance(by: .milliseconds(200))  // not yet: the debounce waits 300 ms
    runner.send(.typed("sp"))              // cancels the run sleeping for "s"
    clock.advance(by: .milliseconds(300))  // the run for "sp" wakes; its event is reduced

    try runner.expectStates([
        Search(),
        Search(query: "s"),
        Search(query: "sp"),
        Search(query: "sp", loaded: "sp"),
    ])
    try runner.expectSettled()  // nothing more happens until the test acts

    let cancelled = runner.effectLog.cancelledRuns()  // [TestEffectRun(feedback: 0, state: 1)]
    // snippet.hide
    precondition(cancelled == [TestEffectRun(feedback: 0, state: 1)], "cancelled runs \(cancelled)")
    precondition(
        runner.effectLog.discardedEvents().isEmpty,
        "the overtaken run slept: it should emit nothing, \(runner.effectLog.discardedEvents())")
    // snippet.show
}
// snippet.end
// snippet.hide
try typingFastLoadsOnlyTheLastQuery()
// snippet.show

// snippet.levels
let runner = TestSpin(spin)  // the levels spin: leftEffect and rightEffect
let settlement = runner.runUntilIdle()  // .settled
let finalState = runner.state           // Levels(left: 10, right: 0)
let count = runner.states.count         // 21: the initial state and one per event
// snippet.end
// snippet.hide
precondition(settlement == .settled, "the levels runner should settle, it is \(settlement)")
precondition(finalState == Levels(left: 10, right: 0), "final state \(finalState)")
precondition(count == 21, "\(count) states")
// snippet.show

// snippet.testFeedback
let balancer = TestFeedback(Feedback<Levels, LevelsEvent>(streamEffect: { states in
    states.compactMap { $0.left < $0.right ? .increaseLeft : nil }
}))
let events = balancer.run(states: [Levels(left: 0, right: 2), Levels(left: 2, right: 2)])  // [.increaseLeft]
let runs = balancer.effectLog.startedRuns().count  // 1: one run reads every state
// snippet.end
// snippet.hide
precondition(events == [.increaseLeft], "events \(events)")
precondition(runs == 1, "the stream form should start one run, it started \(runs)")
// snippet.show
