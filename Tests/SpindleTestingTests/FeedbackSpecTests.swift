import Dispatch
import Spindle
import SpindleTesting
import Testing
import SpindleLevelsFixture
import SpindleTestSupport

/// Waits `milliseconds` on a dispatch timer, ignoring cancellation: a run
/// that sleeps so still returns its event after a newer state cancelled it.
func sleepIgnoringCancellation(milliseconds: Int) async {
    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(milliseconds)) { done.resume() }
    }
}

/// Answers each state `n` with `n * 10` after 100 ms, ignoring cancellation.
@Sendable func slowAnswer(_ n: Int) async -> Int? {
    await sleepIgnoringCancellation(milliseconds: 100)
    return n * 10
}

struct Boom: Error {}

/// How long a spec here waits for each state and for the runs to settle: a
/// hang guard. The runs settle within milliseconds (100 ms for the slow
/// answers), but the unit stage runs every suite at once on as few as two
/// cores, where the spec's 5 s default leaves too little margin.
let settleGuard: Duration = .seconds(hangGuardSeconds)

@Suite struct FeedbackSpecTests {
    @Test func aSyncEffectIsRunOncePerStateInOrder() async {
        let result = await FeedbackSpec<Levels, LevelsEvent>(effect: leftEffect).run(states: [
            Levels(left: 0, right: 2), Levels(left: 1, right: 2), Levels(left: 2, right: 2),
        ], timeout: settleGuard)
        #expect(result.settled)
        #expect(result.runSteps == [0, 1, 2])
        #expect(result.emissions == [.init(step: 0, event: .increaseLeft), .init(step: 1, event: .increaseLeft)])
        #expect(result.cancelledSteps.isEmpty)
    }

    @Test func aFilteredOutStateStartsNoRun() async {
        let spec = FeedbackSpec<Int, Int>(effect: { $0 }, filteredBy: { $0.isMultiple(of: 2) })
        let result = await spec.run(states: [1, 2, 3, 4], timeout: settleGuard)
        #expect(result.runSteps == [1, 3])
        #expect(result.events == [2, 4])
    }

    @Test(arguments: [FeedbackSpec<Int, Int>.Pacing.immediately, .every(.milliseconds(10))])
    func cancelOnNewStateDiscardsTheOvertakenRunsEvents(pacing: FeedbackSpec<Int, Int>.Pacing) async {
        // The runs for states 1 and 2 answer only once the run for state 3
        // has started, so after their cancellation however slowly the
        // machine runs (a 100 ms sleep against 10 ms pacing failed under
        // load: run 0 answered before state 2 arrived).
        let lastRunStarted = OpenOnce()
        let spec = FeedbackSpec<Int, Int>(effect: { (n: Int) async -> Int? in
            if n == 3 {
                lastRunStarted.open()
            } else {
                await lastRunStarted.wait()  // ignores cancellation
            }
            return n * 10
        }, applying: .cancelOnNewState)
        let result = await spec.run(states: [1, 2, 3], pacing: pacing, timeout: settleGuard)
        #expect(result.settled)
        #expect(result.runSteps == [0, 1, 2])
        // Runs 0 and 1 returned their answers, but after they were cancelled.
        #expect(result.cancelledSteps == [0, 1])
        #expect(result.emissions == [.init(step: 2, event: 30)])
    }

    /// Regression: `cancelledSteps` listed the steps in the order their runs
    /// ended, so the README's `[0, 1]` came out `[1, 0]` when the run for
    /// step 1 happened to end first. Here it always does: the run for step 0
    /// lingers 150 ms after its cancellation, the run for step 1 does not.
    @Test func cancelledStepsAreAscendingWhicheverRunEndsFirstRegression() async {
        let spec = FeedbackSpec<Int, Int>(effect: { (n: Int) async -> Int? in
            guard n < 3 else { return n }
            // Until a newer state cancels the run: no clock margin (a loaded
            // machine once took over 5 s to deliver it); the spec's timeout
            // is the hang guard.
            try? await Task.sleep(for: .seconds(86_400))
            if n == 1 { await sleepIgnoringCancellation(milliseconds: 150) }
            return n
        }, applying: .cancelOnNewState)
        let result = await spec.run(states: [1, 2, 3], pacing: .immediately, timeout: settleGuard)
        #expect(result.settled)
        #expect(result.cancelledSteps == [0, 1])
        #expect(result.events == [3])
    }

    @Test func continueOnNewStateKeepsEveryRunsEvents() async {
        let spec = FeedbackSpec<Int, Int>(effect: slowAnswer, applying: .continueOnNewState)
        let result = await spec.run(states: [1, 2, 3], pacing: .immediately, timeout: settleGuard)
        #expect(result.settled)
        #expect(result.cancelledSteps.isEmpty)
        #expect(result.events.sorted() == [10, 20, 30])
        #expect(Set(result.emissions.map(\.step)) == [0, 1, 2])
    }

    @Test func afterSettlingNoRunIsOvertaken() async {
        let result = await FeedbackSpec<Int, Int>(effect: slowAnswer).run(states: [1, 2, 3], timeout: settleGuard)
        #expect(result.cancelledSteps.isEmpty)
        #expect(result.events == [10, 20, 30])
    }

    @Test func aSequenceEffectEmitsEveryElementTaggedWithItsStep() async {
        let spec = FeedbackSpec<Int, Int>(effect: { (n: Int) in
            AsyncStream<Int> { continuation in
                continuation.yield(n)
                continuation.yield(-n)
                continuation.finish()
            }
        })
        let result = await spec.run(states: [1, 2], timeout: settleGuard)
        #expect(result.settled)
        #expect(result.emissions == [
            .init(step: 0, event: 1), .init(step: 0, event: -1), .init(step: 1, event: 2), .init(step: 1, event: -2),
        ])
        #expect(result.events(forStep: 1) == [2, -2])
    }

    @Test func aCancelledSequenceStopsAndItsLaterElementsAreDiscarded() async {
        // Each run emits its state at once, then `n * 100`: the run for
        // state 2 at once, the run for state 1 only once the run for state 2
        // has started, so after its cancellation however slowly the machine
        // runs (a 100 ms sleep against 20 ms pacing failed under load).
        let secondRunStarted = OpenOnce()
        let spec = FeedbackSpec<Int, Int>(effect: { (n: Int) in
            AsyncStream<Int> { continuation in
                if n == 2 { secondRunStarted.open() }
                continuation.yield(n)
                let task = Task {
                    if n == 1 { await secondRunStarted.wait() }  // ignores cancellation
                    continuation.yield(n * 100)
                    continuation.finish()
                }
                continuation.onTermination = { _ in task.cancel() }
            }
        }, applying: .cancelOnNewState)
        let result = await spec.run(states: [1, 2], pacing: .every(.milliseconds(20)), timeout: settleGuard)
        #expect(result.settled)
        #expect(result.cancelledSteps == [0])
        // The run for state 1 never gets its 100 in; its 1 does unless the
        // machine was so slow that state 2 came within the 20 ms first.
        #expect(result.events(forStep: 0) == [1] || result.events(forStep: 0).isEmpty)
        #expect(result.events(forStep: 1) == [2, 200])
        #expect(!result.events.contains(100))
    }

    @Test func aThrownErrorIsListedWithItsStep() async {
        let spec = FeedbackSpec<Int, Int>(effect: { (n: Int) async throws -> Int? in
            if n == 2 { throw Boom() }
            return n
        })
        let result = await spec.run(states: [1, 2, 3], timeout: settleGuard)
        #expect(result.events == [1, 3])
        #expect(result.failures.map(\.step) == [1])
        #expect(result.failures.first?.error is Boom)
    }

    @Test func aRunThatNeverEndsDoesNotSettle() async {
        let spec = FeedbackSpec<Int, Int>(effect: { (_: Int) in
            AsyncStream<Int> { _ in }  // never finishes
        }, applying: .continueOnNewState)
        let result = await spec.run(states: [1], timeout: .milliseconds(100))
        #expect(!result.settled)
        #expect(result.events.isEmpty)
    }
}
