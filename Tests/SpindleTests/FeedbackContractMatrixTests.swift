import Dispatch
import Foundation
@_spi(Testing) import Spindle
import Testing
import SpindleTestSupport

// The contract for every feedback form × every executor × both strategies
// (contract items 3, 4 and 10): each effect is called for the initial state
// first, then for every new state in reduction order (or, conflated, for a
// strictly newer state each time, ending with the final one); never after a
// newer state's call, never after `stop()` returns; and on the queue the
// feedback names, else on the loop's serial queue when it has one.
//
// The checks are one function, `contractViolations`, so that the broken
// variants below can feed it the logs each bug would leave and show that
// it reports them.

/// Where a feedback is placed.
enum FeedbackPlacement: String, CaseIterable, Sendable, CustomStringConvertible {
    /// No queue named.
    case loopExecutor
    /// `execute(on:)` a serial queue of the test's.
    case namedQueue
    var description: String { rawValue }
}

/// The feedback forms, as a test builds them.
enum MatrixForm: String, CaseIterable, Sendable, CustomStringConvertible {
    case sync, async, throwingAsync, asyncSequence, streamEffect, gearPropagating, latestStateSync
    var description: String { rawValue }

    /// Whether the form runs once per state as a run that a new state may cancel.
    var hasStrategy: Bool { [.async, .throwingAsync, .asyncSequence].contains(self) }
    /// Whether the form may skip states (conflation).
    var conflates: Bool { self == .latestStateSync }
    /// Whether the effect is called in the loop's slice (on its executor).
    var runsInSlice: Bool { self == .sync || self == .latestStateSync }
}

/// One call of an effect, as the effect itself saw it.
struct EffectCall: Sendable, Equatable {
    let state: Int
    /// `stop()` had returned when the call was made.
    let afterStop: Bool
    /// The call ran on the queue it should run on (true when no place is
    /// expected).
    let placed: Bool
}

/// What a log of effect calls must show.
struct CallExpectation: Sendable {
    let finalState: Int
    let conflated: Bool
}

/// The contract's violations in `calls`, one line each (empty: none).
func contractViolations(_ calls: [EffectCall], _ expected: CallExpectation) -> [String] {
    var violations: [String] = []
    let states = calls.map(\.state)
    if expected.conflated {
        for (earlier, later) in zip(states, states.dropFirst()) where later <= earlier {
            violations.append("call for state \(later) after the call for \(earlier)")
        }
        if states.last != expected.finalState {
            violations.append("the last call was for \(states.last.map(String.init) ?? "nothing"), not the final state \(expected.finalState)")
        }
    } else if states != Array(0...expected.finalState) {
        let firstBad = zip(states, 0...).first { $0.0 != $0.1 }
        violations.append("calls were not every state in order: \(states.count) calls, first difference at \(firstBad.map { "call \($0.1): state \($0.0)" } ?? "the end")")
    }
    if let late = calls.first(where: \.afterStop) {
        violations.append("a call for state \(late.state) after stop() returned")
    }
    if let misplaced = calls.first(where: { !$0.placed }) {
        violations.append("the call for state \(misplaced.state) ran off its queue")
    }
    return violations
}

/// Counts effect runs started and ended (an ended run's task is gone, so it
/// can call nothing any more): the positive signal the matrix waits for.
final class RunBooks<State: Sendable, Event: Sendable>: SpinObserver, Sendable {
    private let started = Counter()
    private let ended = Counter()
    func effectStarted(_ run: EffectRun) { started.add() }
    func effectFinished(_ run: EffectRun) { ended.add() }
    var allEnded: Bool { started.current == ended.current }
}

@Suite("The feedback contract, every form × executor × strategy")
struct FeedbackContractMatrixTests {
    static let strategies: [ExecutionStrategy] = [.cancelOnNewState, .continueOnNewState]
    /// An executor and a feedback placement.
    struct Place: Sendable, CustomStringConvertible {
        let executor: ExecutorKind
        let placement: FeedbackPlacement
        var description: String { "\(executor), \(placement)" }
    }

    static let places: [Place] = ExecutorKind.allCases.flatMap { executor in
        FeedbackPlacement.allCases.map { Place(executor: executor, placement: $0) }
    }

    @Test(arguments: MatrixForm.allCases, places)
    func effectsAreCalledInStateOrderInPlaceAndNeverAfterStop(form: MatrixForm, place: Place) async throws {
        for strategy in form.hasStrategy ? Self.strategies : [.cancelOnNewState] {
            try await check(form: form, executor: place.executor, placement: place.placement, strategy: strategy)
        }
    }

    private func check(
        form: MatrixForm, executor: ExecutorKind, placement: FeedbackPlacement, strategy: ExecutionStrategy
    ) async throws {
        let events = 40
        let named = MarkedQueue("spindle-test-feedback")
        let stopReturned = Counter()
        let calls = Recorder<EffectCall>()
        // Where the effect must run: the named queue; else the loop's
        // serial queue when it has one (`.queue`); else, for
        // an effect called in the slice, the loop's executor; else
        // anywhere (the cooperative pool, documented).
        let placedHere: @Sendable () -> Bool = {
            switch (placement, executor) {
            case (.namedQueue, _): named.isCurrent
            case (.loopExecutor, .serialQueue): serialExecutorMark.isCurrent
            case (.loopExecutor, let kind) where form.runsInSlice: kind.runsHere
            case (.loopExecutor, _): true
            }
        }
        let record: @Sendable (Int) -> Void = { state in
            calls.append(EffectCall(state: state, afterStop: stopReturned.current > 0, placed: placedHere()))
        }
        let gear = Gear<Int>()
        var feedback: Feedback<Int, Int>
        switch form {
        case .sync:
            feedback = Feedback(effect: { (state: Int) -> Int? in record(state); return nil })
        case .latestStateSync:
            feedback = Feedback(effect: { (state: Int) -> Int? in record(state); return nil }).delivering(.latestState)
        case .async:
            feedback = Feedback(effect: { (state: Int) async -> Int? in
                record(state)
                await Task.yield()
                if !placedHere() { record(-1) }  // still in place after a suspension
                return nil
            }, applying: strategy)
        case .throwingAsync:
            feedback = Feedback(effect: { (state: Int) async throws -> Int? in
                record(state)
                try await Task.sleep(for: .microseconds(20))
                if !placedHere() { record(-1) }
                return nil
            }, applying: strategy)
        case .asyncSequence:
            feedback = Feedback(effect: { (state: Int) -> AsyncStream<Int> in
                record(state)
                return AsyncStream { $0.finish() }
            }, applying: strategy)
        case .streamEffect:
            feedback = Feedback(streamEffect: { (states: AsyncStream<Int>) in
                states.compactMap { (state: Int) -> Int? in record(state); return nil }
            })
        case .gearPropagating:
            feedback = Feedback(attachedTo: gear, toGear: { (state: Int) -> Int? in record(state); return nil })
        }
        if placement == .namedQueue { feedback = feedback.execute(on: named.queue) }
        let books = RunBooks<Int, Int>()
        let spin = Spin<Int, Int>(
            initialState: 0, feedbacks: [feedback],
            reducer: Reducer { state, event in state + event }
        ).observed(by: books)
        let final = try await executor.withExecutor { spinExecutor in
            let loop = try spin.start(options: SpinOptions(executor: spinExecutor))
            for _ in 0..<events { loop.emit(1) }
            // Every state reached the feedback before the stop, so a
            // conflated feedback too must have had the final one.
            _ = await eventually { calls.values.last?.state == events }
            await loop.stop()
            stopReturned.add()
            return loop.state
        }
        // Positive signal: every run's task has ended, so no call can come.
        #expect(await eventually { books.allEnded }, "effect runs still live")
        #expect(final == events)
        let violations = contractViolations(
            calls.values.filter { $0.state >= 0 },
            CallExpectation(finalState: events, conflated: form.conflates))
        #expect(violations.isEmpty, "\(form) on \(executor), \(placement), \(strategy): \(violations)")
        #expect(!calls.values.contains { $0.state == -1 }, "an async effect resumed off its queue")
    }

    // MARK: The checks catch what they are meant to catch

    @Test func theChecksReportCallsOutOfOrder() {
        let calls = [0, 1, 3, 2, 4].map { EffectCall(state: $0, afterStop: false, placed: true) }
        #expect(!contractViolations(calls, CallExpectation(finalState: 4, conflated: false)).isEmpty)
        #expect(!contractViolations(calls, CallExpectation(finalState: 4, conflated: true)).isEmpty)
    }

    @Test func theChecksReportAStaleCallAfterANewerOne() {
        // A cancelled run's effect called after the next state's.
        let calls = [0, 1, 2, 1].map { EffectCall(state: $0, afterStop: false, placed: true) }
        #expect(!contractViolations(calls, CallExpectation(finalState: 2, conflated: true)).isEmpty)
        #expect(!contractViolations(calls, CallExpectation(finalState: 2, conflated: false)).isEmpty)
    }

    @Test func theChecksReportAMissingOrRepeatedState() {
        let missing = [0, 1, 3].map { EffectCall(state: $0, afterStop: false, placed: true) }
        #expect(!contractViolations(missing, CallExpectation(finalState: 3, conflated: false)).isEmpty)
        let repeated = [0, 1, 1, 2].map { EffectCall(state: $0, afterStop: false, placed: true) }
        #expect(!contractViolations(repeated, CallExpectation(finalState: 2, conflated: true)).isEmpty)
        let notFinal = [0, 1].map { EffectCall(state: $0, afterStop: false, placed: true) }
        #expect(!contractViolations(notFinal, CallExpectation(finalState: 2, conflated: true)).isEmpty)
    }

    @Test func theChecksReportACallAfterStopAndACallOffItsQueue() {
        var calls = [0, 1, 2].map { EffectCall(state: $0, afterStop: false, placed: true) }
        calls[2] = EffectCall(state: 2, afterStop: true, placed: true)
        #expect(!contractViolations(calls, CallExpectation(finalState: 2, conflated: false)).isEmpty)
        calls[2] = EffectCall(state: 2, afterStop: false, placed: false)
        #expect(!contractViolations(calls, CallExpectation(finalState: 2, conflated: false)).isEmpty)
        calls[2] = EffectCall(state: 2, afterStop: false, placed: true)
        #expect(contractViolations(calls, CallExpectation(finalState: 2, conflated: false)).isEmpty)
    }
}
