import Spindle
import SpindleTesting
import Testing
import SpindleLevelsFixture

/// The spin of the README's levels example, both feedbacks included.
let levelsSpin = Spin(initialState: Levels(left: 0, right: 10)) {
    Feedback(effect: leftEffect)
    Feedback(effect: rightEffect)
    Reducer(levelsReducer)
}

/// A continuation a test holds and resumes itself: something a run awaits
/// that is outside the runner's control.
final class OutsideSignal: Sendable {
    private let waiter = Lock<CheckedContinuation<Void, Never>?>(nil)

    func wait() async {
        await withCheckedContinuation { continuation in waiter.withLock { $0 = continuation } }
    }

    func fire() {
        waiter.withLock { continuation in
            continuation?.resume()
            continuation = nil
        }
    }
}

@Suite struct TestSpinTests {
    @Test func sendReducesAtOnceAndEveryIntermediateStateIsKept() throws {
        let runner = TestSpin(Spin(initialState: Levels(left: 0, right: 10)) { Reducer(levelsReducer) })
        #expect(runner.send(.increaseLeft) == Levels(left: 1, right: 10))
        runner.send(.decreaseRight, .decreaseRight)
        try runner.expectStates([
            Levels(left: 0, right: 10), Levels(left: 1, right: 10), Levels(left: 1, right: 9), Levels(left: 1, right: 8),
        ])
        #expect(runner.events == [.increaseLeft, .decreaseRight, .decreaseRight])
    }

    @Test func emittedEventsWaitUntilStepped() {
        let runner = TestSpin(levelsSpin)
        // The initial state ran both synchronous feedbacks; nothing is reduced yet.
        #expect(runner.states == [Levels(left: 0, right: 10)])
        #expect(runner.pendingEvents == [.increaseLeft, .decreaseRight])
        #expect(runner.step() == Levels(left: 1, right: 10))
        #expect(runner.pendingEvents == [.decreaseRight, .increaseLeft, .decreaseRight])
        #expect(runner.step() == Levels(left: 1, right: 9))
    }

    @Test func theLevelsExampleRunsToCompletionDeterministically() throws {
        let runner = TestSpin(levelsSpin)
        #expect(runner.runUntilIdle() == .settled)
        // Every state where left < right emits both events, FIFO: they alternate.
        try runner.expectStates((0...20).map { i in Levels(left: (i + 1) / 2, right: 10 - i / 2) })
        #expect(runner.events == Array(repeating: [LevelsEvent.increaseLeft, .decreaseRight], count: 10).flatMap { $0 })
        #expect(runner.state == Levels(left: 10, right: 0))
        #expect(runner.states.prefix(4) == [
            Levels(left: 0, right: 10), Levels(left: 1, right: 10), Levels(left: 1, right: 9), Levels(left: 2, right: 9),
        ])
        #expect(runner.effectLog.startedRuns().count == 42)  // two feedbacks × 21 states
    }

    @Test func aRunWaitingOutsideTheRunnerIsNamedThenSettles() {
        let signal = OutsideSignal()
        let runner = TestSpin(Spin(initialState: 0) {
            Feedback<Int, Int>(effect: { (n: Int) async -> Int? in
                guard n == 0 else { return nil }
                await signal.wait()
                return 7
            })
            Reducer { $0 + $1 }
        })
        #expect(runner.runUntilIdle() == .waiting(on: [TestEffectRun(feedback: 0, state: 0)]))
        signal.fire()  // from the test's thread: the job lands on the runner's executor
        #expect(runner.runUntilIdle() == .settled)
        #expect(runner.states == [0, 7])
    }

    @Test func aLoopThatNeverStopsHitsTheStepLimit() {
        let runner = TestSpin(Spin(initialState: 0) {
            Feedback<Int, Int>(effect: { (_: Int) -> Int? in 1 })
            Reducer { $0 + $1 }
        }, stepLimit: 100)
        #expect(runner.runUntilIdle() == .stepLimitReached(100))
        #expect(runner.state == 100)
        #expect(runner.states.count == 101)
    }

    @Test func aWrongReducerFailsWithTheStatesAndTheLog() throws {
        let runner = TestSpin(Spin(initialState: Levels(left: 0, right: 10)) {
            Feedback(effect: leftEffect)
            Reducer(wrongLevelsReducer)
        })
        runner.runUntilIdle()
        let failure = try #require(throws: SpecFailure.self) {
            try runner.expectStates([Levels(left: 0, right: 10), Levels(left: 1, right: 10)])
        }
        #expect(failure.message.hasPrefix("TestSpin failed: the state after event 1 (increaseLeft) is not the expected one\n"))
        #expect(failure.message.contains("difference (− expected, + actual):\n  −   - left: 1\n  +   - left: 2\n"))
        #expect(failure.message.contains("  1. Levels(left: 2, right: 10)  (after increaseLeft)\n"))
        #expect(failure.message.contains("feedback 0 @ state 0: emitted increaseLeft"))
        #expect(throws: SpecFailure.self) { try runner.expectState(Levels(left: 9, right: 10)) }
    }

    @Test func aLatestStateFeedbacksEventsWaitInThePendingEventsToo() {
        // The engine runs it once per batch, after the batch's reductions.
        let runner = TestSpin(Spin(initialState: 0) {
            Feedback<Int, Int>(effect: { $0 < 2 ? 1 : nil }).delivering(.latestState)
            Reducer { $0 + $1 }
        })
        #expect(runner.pendingEvents == [1])  // from the initial state
        #expect(runner.step() == 1)
        #expect(runner.pendingEvents == [1])
        #expect(runner.runUntilIdle() == .settled)
        #expect(runner.states == [0, 1, 2])
        #expect(runner.effectLog.startedRuns() == [0, 1, 2].map { TestEffectRun(feedback: 0, state: $0) })
    }

    @Test func stopCancelsTheRunsAndDiscardsWhatTheyEmitLater() {
        let clock = TestClock()
        let runner = TestSpin(Spin(initialState: 1) {
            Feedback<Int, Int>(effect: { (n: Int) async -> Int? in
                try? await clock.sleep(for: .seconds(1))  // ignores the cancellation
                return n
            })
            Reducer { $0 + $1 }
        })
        #expect(runner.runUntilIdle() == .settled)
        #expect(runner.activeRuns == [TestEffectRun(feedback: 0, state: 0)])
        runner.stop()
        #expect(runner.activeRuns.isEmpty)
        #expect(runner.effectLog.entries(of: TestEffectRun(feedback: 0, state: 0)).map { "\($0)" } == [
            "started", "cancelled", "discarded(1)", "finished",
        ])
        #expect(runner.states == [1])
    }
}
