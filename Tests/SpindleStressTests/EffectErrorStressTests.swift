@_spi(Testing) @_spi(Benchmarks) @_spi(Tuning) import Spindle
import Testing
import SpindleTestSupport

/// What an effect threw: the producer item whose state started the run.
struct StressEffectFailure: Error, Equatable {
    let item: Int
}

enum ErrorEvent: Sendable {
    case item(Int)
    case answer(Int)
}

struct ErrorState: Sendable {
    var items = 0
    var answers = 0
    var lastItem: Int?
}

extension StressSuite {
    /// Issue 4, item 7: effects that throw under load. Every error reaches the
    /// loop's `onEffectError` hook with the feedback's index, the loop keeps
    /// reducing, and the counts add up exactly.
    @Suite("Effects that throw")
    struct EffectErrorStressTests {
        @Test("thrown effect errors reach the hook and the loop keeps running", arguments: stressQueues)
        func thrownErrorsReachTheHookAndTheLoopKeepsRunning(queue: QueueKind) async throws {
            let baseline = await LiveBaseline.settle()
            do {
                let items = max(1_000, StressScale.eventsPerQueue / 1_000)
                let reported = Recorder<EffectError>()
                let elementsMade = Counter()
                let loop = try Spin(initialState: ErrorState()) {
                    // Index 0: async, throws for every third item, else answers.
                    Feedback<ErrorState, ErrorEvent>(
                        effect: { (state: ErrorState) async throws -> ErrorEvent? in
                            guard let item = state.lastItem else { return nil }
                            await Task.yield()
                            if item % 3 == 0 { throw StressEffectFailure(item: item) }
                            return .answer(item)
                        },
                        applying: .continueOnNewState)
                    // Index 1: a sequence that answers once, then throws, for
                    // every fifth item.
                    Feedback<ErrorState, ErrorEvent>(
                        effect: { (state: ErrorState) -> AsyncThrowingStream<ErrorEvent, any Error> in
                            AsyncThrowingStream { continuation in
                                if let item = state.lastItem, item % 5 == 0 {
                                    elementsMade.add()
                                    continuation.yield(.answer(item))
                                    continuation.finish(throwing: StressEffectFailure(item: item))
                                } else {
                                    continuation.finish()
                                }
                            }
                        },
                        applying: .continueOnNewState)
                    Reducer<ErrorState, ErrorEvent> { state, event in
                        var state = state
                        switch event {
                        case .item(let item):
                            state.items += 1
                            state.lastItem = item
                        case .answer:
                            state.answers += 1
                            state.lastItem = nil
                        }
                        return state
                    }
                }.start(options: SpinOptions(queue: queue, onEffectError: { reported.append($0) }))

                let accepted = Counter()
                let finished = await onThreads(2) { producer in
                    // Two producers, disjoint items: even and odd.
                    for index in 0..<items / 2 where loop.emit(.item(index * 2 + producer)) == .accepted {
                        accepted.add()
                    }
                }
                #expect(finished, "producers did not finish: a hang")
                #expect(accepted.current == items / 2 * 2)
                let total = items / 2 * 2
                let throwingAsync = (0..<total).filter { $0 % 3 == 0 }.count
                let throwingSequences = (0..<total).filter { $0 % 5 == 0 }.count
                let answers = (total - throwingAsync) + throwingSequences
                // Runs go on (.continueOnNewState): wait until all are over.
                await baseline.expectEffectTasksEnded()
                let settled = await eventually {
                    loop.state.answers == answers && reported.count == throwingAsync + throwingSequences
                }
                #expect(settled, "answers \(loop.state.answers) of \(answers), errors \(reported.count) of \(throwingAsync + throwingSequences)")

                // The loop still runs after all those errors: one more item,
                // and its runs answer and throw like the others.
                #expect(loop.emit(.item(total)) == .accepted)
                let allItems = 0...total
                let asyncErrors = allItems.filter { $0 % 3 == 0 }.count
                let sequenceErrors = allItems.filter { $0 % 5 == 0 }.count
                let allAnswers = (allItems.count - asyncErrors) + sequenceErrors
                let resumed = await eventually {
                    loop.state.items == total + 1 && loop.state.answers == allAnswers
                        && reported.count == asyncErrors + sequenceErrors
                }
                #expect(resumed, "after the errors: answers \(loop.state.answers) of \(allAnswers), errors \(reported.count) of \(asyncErrors + sequenceErrors)")
                await baseline.expectEffectTasksEnded()
                let report = await loop.stop()
                let statistics = loop.statistics
                let errors = reported.values

                let fromAsync = errors.filter { $0.feedbackIndex == 0 }.compactMap { $0.underlying as? StressEffectFailure }
                let fromSequences = errors.filter { $0.feedbackIndex == 1 }.compactMap { $0.underlying as? StressEffectFailure }
                #expect(fromAsync.count == asyncErrors)
                #expect(fromSequences.count == sequenceErrors)
                #expect(fromAsync.count + fromSequences.count == errors.count, "an error with a wrong index or type")
                #expect(fromAsync.allSatisfy { $0.item % 3 == 0 })
                #expect(fromSequences.allSatisfy { $0.item % 5 == 0 })
                #expect(Set(fromAsync.map(\.item)).count == fromAsync.count, "an error reported twice")
                #expect(statistics.effectErrors == errors.count)
                #expect(elementsMade.current == fromSequences.count)
                #expect(report.reduced == loop.state.items + loop.state.answers)
                #expect(statistics.lateEventsDiscarded == 0)
                reportTotal("effect-errors", queue: name(of: queue), errors.count)
            }
            await baseline.expectReturned()
        }
    }
}
