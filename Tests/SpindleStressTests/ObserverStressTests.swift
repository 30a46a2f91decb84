@_spi(Testing) @_spi(Benchmarks) @_spi(Tuning) import Spindle
import Testing
import SpindleTestSupport

/// An observer that checks, in plain fields, what the reducer thread reports
/// (so a second thread in those callbacks is a TSan report), and counts the
/// effect callbacks, which come from many threads, under a lock.
final class CheckingObserver: SpinObserver, @unchecked Sendable {
    // @unchecked: the plain fields are touched by the loop's reducer thread
    // only while it runs, and read by the test after `stop()` returned (the
    // stop resumes after `loopStopped`, the reducer thread's last act); the
    // rest is behind `Locked`.
    typealias State = Int
    typealias Event = Stamped

    let checker: OrderChecker
    private(set) var lastReduction = 0
    private(set) var reductionGaps = 0
    private(set) var stateMismatches = 0
    private(set) var batchTotal = 0
    private(set) var stopped: StopReport?
    let rejected = Counter()
    let acceptedReports = Counter()
    private struct Runs {
        var started = Set<EffectRun>()
        var cancelled = Set<EffectRun>()
        var finished = Set<EffectRun>()
        var badOrder = 0
        var late = 0
    }
    private let runs = Locked(Runs())

    init(producers: Int) { checker = OrderChecker(producers: producers) }

    func eventReduced(_ event: Stamped, newState: Int, reduction: Int) {
        if reduction != lastReduction + 1 { reductionGaps += 1 }
        lastReduction = reduction
        // The spin's state counts reductions of producer events; bonus
        // events (producer -1) from the effect are counted apart.
        if event.producer >= 0 { checker.observe(event) }
        if newState != reduction { stateMismatches += 1 }
    }

    func batchReduced(_ batch: ReductionBatch) { batchTotal += batch.events }
    func loopStopped(_ report: StopReport) { stopped = report }
    func eventRejected(_ event: Stamped) { _ = rejected.add() }
    func eventAccepted(_ event: Stamped) { if event.producer >= 0 { _ = acceptedReports.add() } }

    func effectStarted(_ run: EffectRun) { runs.withLock { _ = $0.started.insert(run) } }
    func effectCancelled(_ run: EffectRun) {
        runs.withLock { runs in
            if !runs.started.contains(run) || runs.finished.contains(run) { runs.badOrder += 1 }
            runs.cancelled.insert(run)
        }
    }
    func effectFinished(_ run: EffectRun) {
        runs.withLock { runs in
            if !runs.started.contains(run) { runs.badOrder += 1 }
            runs.finished.insert(run)
        }
    }
    func lateEventDiscarded(_ event: Stamped, from run: EffectRun) { runs.withLock { $0.late += 1 } }

    var runCounts: (started: Int, cancelled: Int, finished: Int, badOrder: Int, late: Int) {
        runs.withLock { ($0.started.count, $0.cancelled.count, $0.finished.count, $0.badOrder, $0.late) }
    }
}

extension StressSuite {
    /// Issue 6: the observer hook under concurrency. Producers race each
    /// other and the stop; an async cancelOnNewState effect reports runs from
    /// many threads. Every accepted event is reported once, in producer
    /// order, with its state; every refusal is reported; every run started
    /// is finished, and none is cancelled before it started.
    @Suite("Observer hook under Thread Sanitizer")
    struct ObserverStressTests {
        @Test("every reduction, refusal and effect run is reported, in order", arguments: stressQueues)
        func observedLoopReportsEverything(queue: QueueKind) async throws {
            let baseline = await LiveBaseline.settle()
            do {
                let producers = 4
                let perProducer = StressScale.rounds * 2_500
                let observer = CheckingObserver(producers: producers)
                let spin = Spin<Int, Stamped>(
                    initialState: 0,
                    feedbacks: [
                        Feedback(effect: { (state: Int) async -> Stamped? in
                            await Task.yield()
                            return state % 64 == 0 ? Stamped(producer: -1, sequence: state) : nil
                        }),
                    ],
                    reducer: Reducer { count, _ in count + 1 })
                let loop = try spin.observed(by: observer).start(options: SpinOptions(queue: queue))
                let tallies = Recorder<ProducerTally>()
                let stopper = Task {
                    // Stop while the producers are still emitting.
                    _ = await eventually(within: 30) { observer.checker.progress.current >= producers * perProducer / 2 }
                    return await loop.stop()
                }
                let finished = await onThreads(producers) { producer in
                    var tally = ProducerTally(producer: producer)
                    for sequence in 0..<perProducer {
                        tally.count(loop.emit(Stamped(producer: producer, sequence: sequence)), sequence: sequence)
                    }
                    tallies.append(tally)
                }
                #expect(finished, "producers did not finish: a hang")
                let report = await stopper.value

                let accepted = tallies.values.map(\.accepted).reduce(0, +)
                let refused = tallies.values.map(\.stopped).reduce(0, +)
                #expect(accepted + refused == producers * perProducer)
                #expect(observer.checker.reduced == accepted, "every accepted producer event reported once")
                #expect(observer.acceptedReports.current == accepted, "every accept reported once")
                #expect(observer.checker.outOfOrder == 0)
                #expect(observer.checker.gaps == 0)
                #expect(observer.reductionGaps == 0)
                #expect(observer.stateMismatches == 0)
                #expect(observer.lastReduction == report.reduced)
                #expect(observer.batchTotal == report.reduced)
                #expect(observer.stopped == report)
                #expect(observer.rejected.current >= refused)
                // Effect runs may still emit (and be refused) after stop()
                // returns, until they see their cancellation: compare once
                // every effect task has ended (each delivers its reports first).
                await baseline.expectEffectTasksEnded()
                #expect(observer.rejected.current == loop.statistics.rejectedAfterStop)
                let runs = observer.runCounts
                #expect(runs.started > 0)
                #expect(runs.finished == runs.started, "every run started ends")
                #expect(runs.cancelled <= runs.started)
                #expect(runs.badOrder == 0)
                #expect(runs.late == loop.statistics.lateEventsDiscarded)
                reportTotal("observed-events", queue: name(of: queue), observer.lastReduction)
            }
            await baseline.expectReturned()
        }
    }
}
