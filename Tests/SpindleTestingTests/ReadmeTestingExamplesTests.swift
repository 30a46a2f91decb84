import Spindle
import SpindleTesting
import Testing
import XCTest
import SpindleLevelsFixture
import SpindleTestSupport

// The README's "Testing a spin (SpindleTesting)" snippets, as written there.

@Sendable func slowDouble(_ n: Int) async -> Int? {
    try? await Task.sleep(for: .milliseconds(100))  // a cancelled run wakes early…
    return n * 2                                    // …and its answer is discarded
}

@Suite struct ReadmeTestingExamplesTests {
    @Test func increasingLeftThenDecreasingRight() throws {
        try ReducerSpec(Reducer(levelsReducer))
            .given(Levels(left: 0, right: 10))
            .when(.increaseLeft, .decreaseRight)
            .thenState(equals: Levels(left: 1, right: 9))
    }

    @Test func otherFormsOfThen() throws {
        let outcome = ReducerSpec(Reducer(levelsReducer))
            .given(Levels(left: 0, right: 10))
            .when(.increaseLeft, .increaseLeft)

        try outcome.then("left went up twice") { $0.left == 2 }
        try outcome.thenStates(equal: [Levels(left: 1, right: 10), Levels(left: 2, right: 10)])
        try outcome.then { state in
            #expect(state.right == 10)  // any assertion; an error thrown here fails the spec
        }
        #expect(outcome.finalState == Levels(left: 2, right: 10))
    }

    @Test func aWrongReducerIsCaught() throws {
        #expect(throws: SpecFailure.self) {
            try ReducerSpec(Reducer(wrongLevelsReducer))
                .given(Levels(left: 0, right: 10))
                .when(.increaseLeft, .decreaseRight)
                .thenState(equals: Levels(left: 1, right: 9))
        }
    }

    /// The failure message the README prints, exactly.
    @Test func theReadmeFailureMessage() throws {
        let failure = try #require(throws: SpecFailure.self) {
            try ReducerSpec(Reducer(wrongLevelsReducer))
                .given(Levels(left: 0, right: 10))
                .when(.increaseLeft, .decreaseRight)
                .thenState(equals: Levels(left: 1, right: 9))
        }
        #expect(failure.message == """
            ReducerSpec failed: the final state is not the expected one
            given:
              Levels(left: 0, right: 10)
            when:
              1. increaseLeft
              2. decreaseRight
            expected state:
              Levels(left: 1, right: 9)
            difference (− expected, + actual):
              −   - left: 1
              +   - left: 2
            final state:
              Levels(left: 2, right: 9)
            """)
    }

    @Test func leftEffectStopsWhereTheLevelsMeet() async {
        let result = await FeedbackSpec<Levels, LevelsEvent>(effect: leftEffect)
            .run(states: [Levels(left: 0, right: 2), Levels(left: 1, right: 2), Levels(left: 2, right: 2)])

        #expect(result.events == [.increaseLeft, .increaseLeft])
        #expect(result.events(forStep: 2).isEmpty)
    }

    @Test func cancelOnNewStateAgainstContinueOnNewState() async {
        // The README's cancelOnNewState claim holds whenever each state
        // reaches the feedback within slowDouble's 100 ms of the previous
        // run's start (its cancellation then comes before its sleep ends).
        // Each run's start is recorded to check that; an attempt in which a
        // busy machine took longer is run again, and the claim is checked on
        // the first attempt that kept the pace.
        var checked = false
        for _ in 0..<5 where !checked {
            let starts = Locked<[Int: ContinuousClock.Instant]>([:])
            let timedSlowDouble: @Sendable (Int) async -> Int? = { n in
                starts.withLock { $0[n] = .now }
                return await slowDouble(n)
            }
            let cancelling = await FeedbackSpec<Int, Int>(effect: timedSlowDouble, applying: .cancelOnNewState)
                .run(states: [1, 2, 3], pacing: .immediately)
            let begun = starts.withLock { $0 }
            let keptPace = [(1, 2), (2, 3)].allSatisfy { earlier, later in
                guard let start = begun[earlier], let next = begun[later] else { return false }
                return next - start < .milliseconds(100)
            }
            // Whatever the pace: the last run is never overtaken, and no
            // answer but the runs' own is reduced.
            #expect(cancelling.events.last == 6)
            #expect(Set(cancelling.events).isSubset(of: [2, 4, 6]))
            guard keptPace else { continue }
            checked = true
            #expect(cancelling.events == [6])              // runs 0 and 1 were overtaken
            #expect(cancelling.cancelledSteps == [0, 1])
        }
        if !checked { print("cancelOnNewState: the machine never kept the 100 ms pace; the README's claim went unchecked") }

        let continuing = await FeedbackSpec<Int, Int>(effect: slowDouble, applying: .continueOnNewState)
            .run(states: [1, 2, 3], pacing: .immediately)
        #expect(continuing.events.sorted() == [2, 4, 6])  // every run's answer is reduced
        #expect(continuing.cancelledSteps.isEmpty)
    }
}

/// The README's XCTest snippet: the same specs from an `XCTestCase`.
final class LevelsReducerXCTests: XCTestCase {
    func testIncreasingLeft() throws {
        try ReducerSpec(Reducer(levelsReducer))
            .given(Levels(left: 0, right: 10))
            .when(.increaseLeft)
            .thenState(equals: Levels(left: 1, right: 10))
    }

    func testAWrongReducerIsCaught() {
        XCTAssertThrowsError(
            try ReducerSpec(Reducer(wrongLevelsReducer)).given(Levels(left: 0, right: 10)).when(.increaseLeft)
                .thenState(equals: Levels(left: 1, right: 10))
        ) { error in
            XCTAssertTrue(error is SpecFailure)
        }
    }
}

// "The deterministic runner": `Search`, `SearchEvent` and `searchReducer`
// are the README's, defined in TestClockTests.swift.

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

// "The deterministic runner", effects as data.

struct Suggest: Equatable, Sendable {
    var prefix = ""
    var words: [String] = []
}

enum SuggestEvent: Equatable, Sendable {
    case typed(String)
    case found([String])
}

enum SuggestEffect: Equatable, Sendable {
    case lookUp(String)
}

@Sendable func suggestNext(_ state: Suggest, _ event: SuggestEvent) -> Next<Suggest, SuggestEffect> {
    switch event {
    case .typed(let prefix): .next(Suggest(prefix: prefix), effects: [.lookUp(prefix)])
    case .found(let words): .next(Suggest(prefix: state.prefix, words: words))
    }
}

func suggestSpin(clock: some Clock<Duration>) -> Spin<Suggest, SuggestEvent> {
    let router = EffectRouter<SuggestEffect, SuggestEvent>()
        .route({ effect -> String? in if case .lookUp(let prefix) = effect { prefix } else { nil } }) { prefix in
            try await clock.sleep(for: .milliseconds(50))  // stands in for the network
            return .found(["\(prefix)a", "\(prefix)b"])
        }
    return Spin(initialState: Suggest()) {
        Reducer(suggestNext, effects: router)
    }
}

@Suite struct ReadmeRunnerExamplesTests {
    @Test func typingLooksUpSuggestions() throws {
        let clock = TestClock()
        let runner = TestSpin(suggestSpin(clock: clock))

        runner.send(.typed("sw"))
        #expect(runner.effects(as: SuggestEffect.self) == [.lookUp("sw")])  // its handler sleeps
        clock.advance(by: .milliseconds(50))  // the handler wakes; .found is reduced

        try runner.expectState(Suggest(prefix: "sw", words: ["swa", "swb"]))
        #expect(runner.effectLog.startedRuns() == [TestEffectRun(effect: 0, route: 0, state: 1)])
        #expect(runner.unhandledEffects(as: SuggestEffect.self).isEmpty)
    }

    @Test func typingFastLoadsOnlyTheLastQuery() throws {
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
        #expect(runner.effectLog.cancelledRuns() == [TestEffectRun(feedback: 0, state: 1)])
        #expect(runner.runUntilIdle() == .settled)
    }

    @Test func theLevelsSpinRunsToTheSameEndEveryTime() {
        let spin = levelsSpin
        let runner = TestSpin(spin)  // leftEffect and rightEffect
        #expect(runner.runUntilIdle() == .settled)
        #expect(runner.state == Levels(left: 10, right: 0))
        #expect(runner.states.count == 21)  // the initial state and one per event
    }

    @Test func aStreamFeedbackAgainstStates() {
        let balancer = TestFeedback(Feedback<Levels, LevelsEvent>(streamEffect: { states in
            states.compactMap { $0.left < $0.right ? .increaseLeft : nil }
        }))
        let events = balancer.run(states: [Levels(left: 0, right: 2), Levels(left: 2, right: 2)])
        #expect(events == [.increaseLeft])
        #expect(balancer.effectLog.startedRuns().count == 1)  // one run reads every state
    }
}
