@_spi(Testing) @_spi(Benchmarks) @_spi(Tuning) import Spindle
import SpindleTesting
import Testing
import XCTest
import SpindleLevelsFixture

@Suite struct TestFeedbackTests {
    @Test func aStreamFeedbackReadsEveryStateInOneRun() {
        let feedback = TestFeedback(Feedback<Levels, LevelsEvent>(streamEffect: { states in
            states.compactMap { $0.left < $0.right ? .increaseLeft : nil }
        }))
        let events = feedback.run(states: [Levels(left: 0, right: 2), Levels(left: 2, right: 2), Levels(left: 1, right: 2)])
        #expect(events == [.increaseLeft, .increaseLeft])
        #expect(feedback.effectLog.startedRuns() == [TestEffectRun(feedback: 0, state: 0)])  // one run, never overtaken
        #expect(feedback.runUntilIdle() == .settled)  // waiting for the next state is waiting for the test
        feedback.stop()
        #expect(feedback.effectLog.entries(of: TestEffectRun(feedback: 0, state: 0)).map { "\($0)" }.suffix(2) == [
            "cancelled", "finished",
        ])
    }

    @Test func aStreamFeedbackInASpinSeesEveryState() throws {
        let runner = TestSpin(Spin(initialState: Levels(left: 0, right: 3)) {
            Feedback<Levels, LevelsEvent>(streamEffect: { states in
                states.compactMap { $0.left < $0.right ? .increaseLeft : nil }
            })
            Reducer(levelsReducer)
        })
        #expect(runner.runUntilIdle() == .settled)
        try runner.expectStates([
            Levels(left: 0, right: 3), Levels(left: 1, right: 3), Levels(left: 2, right: 3), Levels(left: 3, right: 3),
        ])
    }

    @Test func aFilteredOutStateStartsNothingAndCancelsNothing() {
        let clock = TestClock()
        let feedback = TestFeedback(Feedback<Int, Int>(effect: { (n: Int) async -> Int? in
            try? await clock.sleep(for: .seconds(1))
            return n
        }, filteredBy: { $0.isMultiple(of: 2) }))
        feedback.send(2)
        feedback.send(3)  // filtered out: run 0 keeps sleeping
        clock.advance(by: .seconds(1))
        feedback.send(4)
        clock.advance(by: .seconds(1))
        #expect(feedback.events == [2, 4])
        #expect(feedback.effectLog.startedRuns() == [TestEffectRun(feedback: 0, state: 0), TestEffectRun(feedback: 0, state: 2)])
        #expect(feedback.effectLog.cancelledRuns().isEmpty)
    }

    @Test func cancelOnNewStateDiscardsWhatAnOvertakenRunEmits() {
        let clock = TestClock()
        let feedback = TestFeedback(Feedback<Int, Int>(effect: { (n: Int) async -> Int? in
            try? await clock.sleep(for: .seconds(1))
            return n
        }))
        feedback.send(1)
        feedback.send(2)
        clock.advance(by: .seconds(1))
        #expect(feedback.events == [2])
        #expect(feedback.effectLog.discardedEvents() == [1])
        #expect(feedback.effectLog.cancelledRuns() == [TestEffectRun(feedback: 0, state: 0)])
    }

    @Test func aGearFeedbackEmitsWhatTheGearPropagates() {
        let gear = Gear<String>()
        let feedback = TestFeedback(Feedback<Int, Int>(attachedTo: gear, fromGear: { (word: String) -> Int? in
            word.isEmpty ? nil : word.count
        }))
        #expect(gear.attachedCount == 1)
        gear.propagate("spin")
        gear.propagate("")
        gear.propagate("dle")
        #expect(feedback.events == [4, 3])
        feedback.stop()
        #expect(gear.attachedCount == 0)
        gear.propagate("late")
        #expect(feedback.events == [4, 3])
    }

    @Test func twoSpinsConnectedByAGear() {
        let gear = Gear<String>()
        let producer = TestSpin(Spin(initialState: 0) {
            Feedback<Int, Int>(attachedTo: gear, toGear: { (n: Int) -> String? in n > 0 ? "#\(n)" : nil })
            Reducer { $1 }
        })
        let consumer = TestSpin(Spin(initialState: [String]()) {
            Feedback<[String], String>(attachedTo: gear, fromGear: { (word: String) -> String? in word })
            Reducer { $0 + [$1] }
        })
        producer.send(1)
        producer.send(2)
        #expect(consumer.pendingEvents == ["#1", "#2"])
        #expect(consumer.runUntilIdle() == .settled)
        #expect(consumer.state == ["#1", "#2"])
    }

    @Test func aReducerThreadFeedbackRunsLikeASynchronousOne() throws {
        let inline = TestFeedback(Feedback(effect: leftEffect).executeOnReducerThread())
        let plain = TestFeedback(Feedback(effect: leftEffect))
        let states = [Levels(left: 0, right: 2), Levels(left: 2, right: 2), Levels(left: 1, right: 5)]
        #expect(inline.run(states: states) == [.increaseLeft, .increaseLeft])
        #expect(inline.run(states: []) == plain.run(states: states))

        let runner = TestSpin(Spin(initialState: Levels(left: 0, right: 3)) {
            Feedback(effect: leftEffect).executeOnReducerThread()
            Reducer(levelsReducer)
        })
        runner.runUntilIdle()
        #expect(runner.state == Levels(left: 3, right: 3))
    }

    @Test func aThrownErrorIsLoggedAsAFailure() {
        let feedback = TestFeedback(Feedback<Int, Int>(effect: { (n: Int) async throws -> Int? in
            if n == 2 { throw Boom() }
            return n
        }))
        #expect(feedback.run(states: [1, 2, 3]) == [1, 3])
        let failed = feedback.effectLog.compactMap { entry -> TestEffectRun? in
            if case .failed(let error) = entry.kind, error is Boom { entry.run } else { nil }
        }
        #expect(failed == [TestEffectRun(feedback: 0, state: 1)])
    }
}

/// The runner from XCTest: nothing in it depends on a test framework.
final class TestSpinXCTests: XCTestCase {
    func testADebouncedSearchLoadsOnlyTheLastQuery() throws {
        let clock = TestClock()
        let runner = TestSpin(Spin(initialState: Search()) {
            Feedback(effect: { (state: Search) async throws -> SearchEvent? in
                guard !state.query.isEmpty, state.loaded != state.query else { return nil }
                try await clock.sleep(for: .milliseconds(300))
                return .loaded(state.query)
            })
            Reducer(searchReducer)
        })
        runner.send(.typed("s"))
        clock.advance(by: .milliseconds(200))
        runner.send(.typed("sp"))
        clock.advance(by: .milliseconds(300))
        XCTAssertEqual(runner.state, Search(query: "sp", loaded: "sp"))
        XCTAssertEqual(runner.effectLog.cancelledRuns(), [TestEffectRun(feedback: 0, state: 1)])
        try runner.expectSettled()
    }

    func testAFailingExpectationThrowsASpecFailure() {
        let runner = TestSpin(Spin(initialState: 0) { Reducer<Int, Int> { $0 + $1 } })
        runner.send(1)
        XCTAssertThrowsError(try runner.expectStates([0, 2])) { error in
            XCTAssertTrue((error as? SpecFailure)?.message.contains("the state after event 1 (1)") == true)
        }
    }
}
