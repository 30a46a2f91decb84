@_spi(Testing) @_spi(Benchmarks) @_spi(Tuning) import Spindle
import Testing
import SpindleTestSupport

/// Ticks start effect runs; answers carry the state of the run that made
/// them and whether that run had already seen its cancellation.
struct StormState: Sendable {
    var ticks = 0
    var answers = 0
    var lastWasTick = false
}

struct StormAnswer: Sendable {
    /// The `ticks` of the state that started the run.
    let runTick: Int
    /// Which answer of its run (0 or 1).
    let index: Int
    /// The run's task was already cancelled when it made this answer. The
    /// cancellation follows the run's invalidation, so such an answer comes
    /// after it and must be discarded, never reduced.
    let sawCancellation: Bool
}

enum StormEvent: Sendable {
    case tick
    case answer(StormAnswer)
}

/// How the storm's feedback answers.
enum StormForm: String, Sendable, CaseIterable, CustomTestStringConvertible {
    /// `(State) async -> Event?`: one answer per run.
    case async
    /// An `AsyncSequence` of two answers per run.
    case sequence

    var testDescription: String { rawValue }
    var answersPerRun: Int { self == .async ? 1 : 2 }
}

/// Reducer-thread-only bookkeeping of the answers (plain fields: a second
/// reducer thread would be a TSan report).
final class StormChecker: @unchecked Sendable {
    // @unchecked: reducer thread only while the loop runs; read after stop.
    private var seen: [Bool]
    private(set) var answersFromCancelledRuns = 0
    private(set) var answersFromTheFuture = 0
    private(set) var duplicateAnswers = 0

    init(maxTicks: Int) { seen = Array(repeating: false, count: (maxTicks + 1) * 2) }

    func observe(_ answer: StormAnswer, ticks: Int) {
        if answer.sawCancellation { answersFromCancelledRuns += 1 }
        if answer.runTick > ticks || answer.runTick < 1 {
            answersFromTheFuture += 1
            return
        }
        let key = answer.runTick * 2 + answer.index
        if seen[key] { duplicateAnswers += 1 }
        seen[key] = true
    }
}

/// An `AsyncSequence` of two answers that ignores cancellation itself
/// (the engine must end it and discard what comes late).
struct StormAnswers: AsyncSequence, Sendable {
    typealias Element = StormEvent
    let runTick: Int
    let made: Counter
    let sawCancellation: Counter

    struct AsyncIterator: AsyncIteratorProtocol {
        let sequence: StormAnswers
        var index = 0
        mutating func next() async -> StormEvent? {
            guard index < 2 else { return nil }
            await Task.yield()
            let cancelled = Task.isCancelled
            if cancelled { sequence.sawCancellation.add() }
            sequence.made.add()
            defer { index += 1 }
            return .answer(StormAnswer(runTick: sequence.runTick, index: index, sawCancellation: cancelled))
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(sequence: self) }
}

extension StressSuite {
    /// Issue 4, item 4: a producer thread emits ticks as fast as it can; each
    /// tick starts an async run under `.cancelOnNewState`, so almost every run
    /// is cancelled by the next. No answer made after a run's cancellation is
    /// reduced, no answer is invented or reduced twice, and the statistics add
    /// up exactly.
    @Suite("Cancellation storm")
    struct CancellationStormStressTests {
        static var ticks: Int { max(1_000, StressScale.eventsPerQueue / 200) }

        @Test("no event of a cancelled run is reduced, and the statistics add up",
              arguments: stressQueues, StormForm.allCases)
        func cancelledRunsNeverHaveTheirEventsReduced(queue: QueueKind, form: StormForm) async throws {
            let baseline = await LiveBaseline.settle()
            do {
                let ticks = Self.ticks
                let runsStarted = Counter()
                let answersMade = Counter()
                let sawCancellation = Counter()
                let checker = StormChecker(maxTicks: ticks)
                let feedback: Feedback<StormState, StormEvent>
                switch form {
                case .async:
                    feedback = Feedback(
                        effect: { (state: StormState) async -> StormEvent? in
                            runsStarted.add()
                            // Ignores cancellation: yields a little, then answers anyway.
                            for _ in 0..<(state.ticks % 3) { await Task.yield() }
                            let cancelled = Task.isCancelled
                            if cancelled { sawCancellation.add() }
                            answersMade.add()
                            return .answer(StormAnswer(runTick: state.ticks, index: 0, sawCancellation: cancelled))
                        },
                        filteredBy: { $0.lastWasTick },
                        applying: .cancelOnNewState)
                case .sequence:
                    feedback = Feedback(
                        effect: { (state: StormState) -> StormAnswers in
                            runsStarted.add()
                            return StormAnswers(runTick: state.ticks, made: answersMade, sawCancellation: sawCancellation)
                        },
                        filteredBy: { $0.lastWasTick },
                        applying: .cancelOnNewState)
                }
                let loop = try Spin(initialState: StormState(), feedbacks: [feedback], reducer: Reducer { state, event in
                    var state = state
                    switch event {
                    case .tick:
                        state.ticks += 1
                        state.lastWasTick = true
                    case .answer(let answer):
                        checker.observe(answer, ticks: state.ticks)
                        state.answers += 1
                        state.lastWasTick = false
                    }
                    return state
                }).start(options: SpinOptions(queue: queue))

                let ticksAccepted = Counter()
                let finished = await onThreads(1) { _ in
                    for _ in 0..<ticks where loop.emit(.tick) == .accepted { ticksAccepted.add() }
                }
                #expect(finished, "the producer did not finish: a hang")
                #expect(ticksAccepted.current == ticks)
                // Every tick state reaches the feedback and starts one run;
                // let every run end before stopping, so the books close.
                #expect(await eventually { loop.statistics.effectRunsStarted == ticks },
                        "runs started: \(loop.statistics.effectRunsStarted) of \(ticks)")
                await baseline.expectEffectTasksEnded()
                let report = await loop.stop()
                let statistics = loop.statistics
                let state = loop.state

                // Nothing from a cancelled run, nothing invented, nothing twice.
                #expect(checker.answersFromCancelledRuns == 0)
                #expect(checker.answersFromTheFuture == 0)
                #expect(checker.duplicateAnswers == 0)
                // Conservation of answers: reduced, discarded late, or refused
                // at the gate (the producer was never refused).
                #expect(state.ticks == ticks)
                #expect(report == StopReport(reduced: ticks + state.answers, discarded: 0))
                #expect(statistics.reducedEvents == report.reduced)
                #expect(answersMade.current == state.answers + statistics.lateEventsDiscarded + statistics.rejectedAfterStop)
                // Runs: one per tick; every run that saw its cancellation was
                // cancelled and had its answer discarded.
                #expect(statistics.effectRunsStarted == ticks)
                #expect(runsStarted.current == ticks)
                #expect(statistics.effectRunsCancelled <= ticks)
                #expect(sawCancellation.current <= statistics.lateEventsDiscarded)
                #expect(statistics.lateEventsDiscarded <= statistics.effectRunsCancelled * form.answersPerRun)
                #expect(statistics.effectErrors == 0)
                stressLine("SPINDLE-STRESS storm queue=\(name(of: queue)) form=\(form) ticks \(ticks), runs cancelled \(statistics.effectRunsCancelled), late answers discarded \(statistics.lateEventsDiscarded) (\(sawCancellation.current) made after their run saw the cancellation), answers reduced \(state.answers)")
                reportTotal("storm-ticks", queue: name(of: queue), ticks)
            }
            await baseline.expectReturned()
        }
    }
}
