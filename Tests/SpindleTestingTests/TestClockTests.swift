import Spindle
import SpindleTesting
import Testing

/// A search box: typing changes the query; a debounced feedback loads it.
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

/// `count` ticks, each `interval` after the previous one on `clock`.
struct Ticks: AsyncSequence, Sendable {
    let clock: TestClock
    let interval: Duration
    let count: Int
    let value: Int

    struct AsyncIterator: AsyncIteratorProtocol {
        let ticks: Ticks
        var emitted = 0

        mutating func next() async throws -> Int? {
            guard emitted < ticks.count else { return nil }
            try await ticks.clock.sleep(for: ticks.interval)
            emitted += 1
            return ticks.value
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(ticks: self) }
}

@Suite struct TestClockTests {
    @Test func aDebouncedEffectWaitsForTheClock() throws {
        let clock = TestClock()
        let runner = TestSpin(Spin(initialState: Search()) {
            Feedback(effect: { (state: Search) async throws -> SearchEvent? in
                guard !state.query.isEmpty, state.loaded != state.query else { return nil }
                try await clock.sleep(for: .milliseconds(300))
                return .loaded(state.query)
            })
            Reducer(searchReducer)
        })
        runner.send(.typed("sp"))
        #expect(runner.runUntilIdle() == .settled)
        clock.advance(by: .milliseconds(100))
        runner.send(.typed("spi"))  // overtakes the sleeping run
        clock.advance(by: .milliseconds(299))
        #expect(runner.state == Search(query: "spi", loaded: nil))
        clock.advance(by: .milliseconds(1))
        try runner.expectStates([
            Search(), Search(query: "sp"), Search(query: "spi"), Search(query: "spi", loaded: "spi"),
        ])
        #expect(runner.effectLog.entries(of: TestEffectRun(feedback: 0, state: 1)).map { "\($0)" } == [
            "started", "cancelled", "finished",  // the sleep threw CancellationError
        ])
        #expect(clock.now == TestClock.Instant(offset: .milliseconds(400)))
        #expect(runner.runUntilIdle() == .settled)
        #expect(runner.activeRuns.isEmpty)
    }

    @Test func cancelOnNewStateDiscardsTheLateEventOfASleepingRun() {
        let clock = TestClock()
        let runner = TestSpin(Spin(initialState: 1) {
            Feedback<Int, Int>(effect: { (n: Int) async -> Int? in
                guard n < 100 else { return nil }
                try? await clock.sleep(for: .seconds(1))  // wakes early when cancelled, and still answers
                return n * 100
            }, applying: .cancelOnNewState)
            Reducer { $1 }
        })
        runner.runUntilIdle()
        runner.send(2)
        #expect(runner.runUntilIdle() == .settled)
        #expect(runner.effectLog.cancelledRuns() == [TestEffectRun(feedback: 0, state: 0)])
        #expect(runner.effectLog.discardedEvents() == [100])
        clock.advance(by: .seconds(1))
        #expect(runner.states == [1, 2, 200])
        #expect(runner.effectLog.emittedEvents() == [200])
    }

    @Test func continueOnNewStateKeepsBothRuns() {
        let clock = TestClock()
        let runner = TestSpin(Spin(initialState: 1) {
            Feedback<Int, Int>(effect: { (n: Int) async throws -> Int? in
                guard n < 100 else { return nil }
                try await clock.sleep(for: .seconds(1))
                return n * 100
            }, applying: .continueOnNewState)
            Reducer { $1 }
        })
        runner.runUntilIdle()
        clock.advance(by: .milliseconds(500))
        runner.send(2)
        clock.advance(by: .milliseconds(500))
        #expect(runner.states == [1, 2, 100])  // the first run answered at 1 s
        clock.advance(by: .milliseconds(500))
        #expect(runner.states == [1, 2, 100, 200])  // the second at 1.5 s
        #expect(runner.effectLog.cancelledRuns().isEmpty)
    }

    @Test func aSequenceEffectEmitsOverVirtualTime() {
        let clock = TestClock()
        let runner = TestSpin(Spin(initialState: 0) {
            Feedback<Int, Int>(effect: { (n: Int) in
                Ticks(clock: clock, interval: .seconds(1), count: n == 0 ? 3 : 0, value: 1)
            }, applying: .continueOnNewState)  // under cancelOnNewState, the first tick's state would end it
            Reducer { $0 + $1 }
        })
        #expect(runner.runUntilIdle() == .settled)
        #expect(clock.sleeperCount == 1)
        clock.advance(by: .seconds(2))
        #expect(runner.states == [0, 1, 2])
        clock.advance(by: .seconds(10))
        #expect(runner.states == [0, 1, 2, 3])
        #expect(clock.sleeperCount == 0)
        #expect(runner.effectLog.entries(of: TestEffectRun(feedback: 0, state: 0)).map { "\($0)" } == [
            "started", "emitted(1)", "emitted(1)", "emitted(1)", "finished",
        ])
    }

    @Test func sleepersWakeInDeadlineOrderAtTheirDeadline() async throws {
        let clock = TestClock()
        let runner = TestSpin(Spin(initialState: [String]()) {
            Feedback<[String], String>(effect: { (log: [String]) async throws -> String? in
                guard log.isEmpty else { return nil }
                try await clock.sleep(for: .seconds(3))
                return "c at \(clock.now.offset)"
            }, applying: .continueOnNewState)
            Feedback<[String], String>(effect: { (log: [String]) async throws -> String? in
                guard log.isEmpty else { return nil }
                try await clock.sleep(for: .seconds(1))
                try await clock.sleep(for: .seconds(1))  // wakes again within the same advance
                return "b at \(clock.now.offset)"
            }, applying: .continueOnNewState)
            Reducer { $0 + [$1] }
        })
        runner.runUntilIdle()
        #expect(clock.nextDeadline == TestClock.Instant(offset: .seconds(1)))
        clock.advance(by: .seconds(5))
        #expect(runner.state == ["b at 2.0 seconds", "c at 3.0 seconds"])
        #expect(clock.now.offset == .seconds(5))
        // A sleep that is already due returns at once.
        try await clock.sleep(until: clock.now)
    }

    @Test func aCancelledTaskThrowsFromSleep() async {
        let clock = TestClock()
        let task = Task { try await clock.sleep(for: .seconds(1)) }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
    }
}
