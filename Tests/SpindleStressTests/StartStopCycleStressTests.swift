import Dispatch
@_spi(Testing) @_spi(Benchmarks) @_spi(Tuning) import Spindle
import Testing
import SpindleTestSupport

/// A counter that tells the test's own events from its feedbacks' events.
struct CycleState: Sendable, Equatable {
    var external = 0
    var fromFeedbacks = 0
    var total: Int { external + fromFeedbacks }
}

enum CycleEvent: Sendable {
    case external
    case fromSync, fromAsync, fromInline
}

extension StressSuite {
    /// Issue 4, item 3: many start/stop cycles with feedbacks in flight
    /// (synchronous on a queue, async, inline on the reducer thread), on every
    /// queue, with draining and discarding stops and some loops released
    /// without a stop. Nothing may leak: loops, reducer threads, feedback
    /// workers, event queues, effect tasks, OS threads.
    @Suite("Start/stop cycles")
    struct StartStopCycleStressTests {
        static let cycleQueues: [QueueKind] = stressQueues + [.bounded(capacity: 64, overflow: .dropNewest)]

        static let spin = Spin(initialState: CycleState()) {
            // A chain of events: every early state answers with another one
            // (from a queue: the loop's states in batches).
            Feedback<CycleState, CycleEvent>(effect: { state in
                state.total < 40 ? .fromSync : nil
            }, on: DispatchQueue(label: "cycles.sync"))
            // Async runs, cancelled by each new state; some answer late.
            Feedback<CycleState, CycleEvent>(effect: { (state: CycleState) async -> CycleEvent? in
                await Task.yield()
                return state.total % 3 == 0 && state.total < 60 ? .fromAsync : nil
            })
            Feedback<CycleState, CycleEvent>(effect: { state in
                state.total % 5 == 1 && state.total < 60 ? .fromInline : nil
            }).executeOnReducerThread()
            Reducer<CycleState, CycleEvent> { state, event in
                var state = state
                if case .external = event { state.external += 1 } else { state.fromFeedbacks += 1 }
                return state
            }
        }

        @Test("start/stop cycles with feedbacks in flight leak no loop, thread, worker, queue or task")
        func startStopCyclesLeakNothing() async throws {
            let baseline = await LiveBaseline.settle()
            let cycles = StressScale.cycles
            let externalPerCycle = 8
            var stoppedCycles = 0
            var releasedCycles = 0
            var mostThreads = baseline.threads
            var threadsAfterWarmUp = -1

            for cycle in 0..<cycles {
                let queue = Self.cycleQueues[cycle % Self.cycleQueues.count]
                let loop = try Self.spin.start(options: SpinOptions(queue: queue))
                var accepted = 0
                for _ in 0..<externalPerCycle where loop.emit(.external) == .accepted { accepted += 1 }
                if cycle % 8 == 7 {
                    // Released with feedbacks in flight and no stop: the loop
                    // drains and tears itself down in the background.
                    releasedCycles += 1
                } else {
                    let mode: StopMode = cycle % 2 == 0 ? .drain : .discardPending
                    let report = await loop.stop(mode)
                    let state = loop.state
                    let statistics = loop.statistics
                    #expect(report.reduced == state.total, "cycle \(cycle)")
                    #expect(statistics.reducedEvents == report.reduced, "cycle \(cycle)")
                    #expect(statistics.discardedAtStop == report.discarded, "cycle \(cycle)")
                    if mode == .drain {
                        #expect(report.discarded == 0, "cycle \(cycle)")
                        #expect(state.external == accepted, "cycle \(cycle)")
                    } else {
                        #expect(state.external <= accepted, "cycle \(cycle)")
                    }
                    #expect(loop.emit(.external) == .stopped, "cycle \(cycle)")
                    stoppedCycles += 1
                }
                if cycle % 100 == 99 {
                    let threads = ProcessProbe.threadCount()
                    mostThreads = max(mostThreads, threads)
                    if cycle == 999 || (cycles < 1000 && cycle == 99) { threadsAfterWarmUp = threads }
                }
            }

            // Every loop (stopped or released) lets go of everything.
            await baseline.expectReturned()
            // Threads: joined or exited (idle dispatch workers may linger a
            // few seconds before they exit, so wait, with a small allowance).
            let allowance = 8
            let threadsBack = await eventually {
                ProcessProbe.threadCount() <= max(baseline.threads, threadsAfterWarmUp) + allowance
            }
            #expect(threadsBack,
                    "threads: \(ProcessProbe.threadCount()) now, \(baseline.threads) at start, \(threadsAfterWarmUp) after warm-up")
            stressLine("SPINDLE-STRESS cycles queue=all \(cycles) (stopped \(stoppedCycles), released \(releasedCycles)); threads: start \(baseline.threads), after warm-up \(threadsAfterWarmUp), most \(mostThreads), end \(ProcessProbe.threadCount())")
        }
    }
}
