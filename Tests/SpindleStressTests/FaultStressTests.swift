import Foundation
@_spi(Testing) @_spi(Benchmarks) @_spi(Tuning) import Spindle
import Testing
import SpindleTestSupport

/// Lets effects reach their own loop without keeping it alive.
final class WeakLoop<State: Sendable, Event: Sendable>: Sendable {
    private let weakStorage = Locked<WeakBox<SpinLoop<State, Event>>>(WeakBox())
    init() {}
    func set(_ loop: SpinLoop<State, Event>?) { weakStorage.withLock { $0.value = loop } }
    var loop: SpinLoop<State, Event>? { weakStorage.withLock { $0.value } }
}

struct WeakBox<Value: AnyObject> {
    weak var value: Value?
}

/// Gear items counted under a lock (the loop under test drains in the
/// background after its release: no join orders the test's reads).
struct GearTally {
    var last = -1
    var count = 0
    var broken = 0
}

extension StressSuite {
    /// Issue 4, item 9: misuse at stress scale and concurrently, each with
    /// its defined outcome.
    @Suite("Faults")
    struct FaultStressTests {
        // MARK: emit after stop

        @Test("emits after stop, from many threads, all answer .stopped and are counted", arguments: stressQueues)
        func emitsAfterStopAnswerStoppedAndAreCounted(queue: QueueKind) async throws {
            let baseline = await LiveBaseline.settle()
            do {
                let checker = OrderChecker(producers: 8, contiguous: false)
                let loop = try Spin(initialState: 0, feedbacks: [], reducer: checker.reducer).start(options: SpinOptions(queue: queue))
                #expect(loop.emit(Stamped(producer: 0, sequence: 0)) == .accepted)
                let report = await loop.stop()
                let perThread = 10_000
                let others = Counter()
                let finished = await onThreads(8) { producer in
                    for sequence in 1...perThread where loop.emit(Stamped(producer: producer, sequence: sequence)) != .stopped {
                        others.add()
                    }
                }
                #expect(finished)
                #expect(others.current == 0, "an emit after stop was not answered .stopped")
                #expect(loop.statistics.rejectedAfterStop == 8 * perThread)
                #expect(report == StopReport(reduced: 1, discarded: 0))
                #expect(loop.state == 1)
                #expect(checker.reduced == 1)
            }
            await baseline.expectReturned()
        }

        // MARK: stop twice, concurrently

        @Test("many concurrent stops while producers emit all return the same, consistent report",
              arguments: stressQueues)
        func concurrentStopsReturnTheSameReport(queue: QueueKind) async throws {
            let baseline = await LiveBaseline.settle()
            for round in 0..<StressScale.rounds {
                let producers = 4
                let checker = OrderChecker(producers: producers)
                let loop = try Spin(initialState: 0, feedbacks: [], reducer: checker.reducer).start(options: SpinOptions(queue: queue))
                let tallies = Recorder<ProducerTally>()
                let stops = Recorder<StopReport>()
                async let producing: Bool = onThreads(producers) { producer in
                    tallies.append(.emittingUntilRefused(producer: producer) { loop.emit($0) })
                }
                _ = await eventually(within: 30) { checker.progress.current >= round * 100 }
                // Eight stops at once, with both modes: the first one wins.
                await withTaskGroup(of: Void.self) { group in
                    for index in 0..<8 {
                        group.addTask { stops.append(await loop.stop(index % 2 == 0 ? .drain : .discardPending)) }
                    }
                }
                let finished = await producing
                #expect(finished)
                let again = await loop.stop()
                let reports = stops.values + [again]
                let accepted = tallies.values.map(\.accepted).reduce(0, +)
                #expect(Set(reports).count == 1, "round \(round): stops returned different reports: \(Set(reports))")
                #expect(reports[0].reduced + reports[0].discarded == accepted, "round \(round)")
                #expect(reports[0].reduced == checker.reduced)
                #expect(tallies.values.allSatisfy { $0.stopped == 1 && $0.dropped == 0 })
                #expect(loop.statistics.rejectedAfterStop == producers)
                #expect(checker.outOfOrder == 0)
                #expect(checker.gaps == 0)
            }
            await baseline.expectReturned()
        }

        // MARK: stop from inside feedbacks

        @Test("stops called from a queue feedback, an async effect and the reducer thread all complete",
              arguments: stressQueues)
        func stopsFromInsideFeedbacksComplete(queue: QueueKind) async throws {
            let baseline = await LiveBaseline.settle()
            for round in 0..<StressScale.rounds {
                let holder = WeakLoop<Int, Stamped>()
                let stops = Recorder<StopReport>()
                let producers = 2
                let checker = OrderChecker(producers: producers)
                let stopAt = 200 + round * 50
                let loop = try Spin(initialState: 0) {
                    Feedback<Int, Stamped>(effect: { count in
                        if count == stopAt, let loop = holder.loop {
                            Task { stops.append(await loop.stop()) }
                        }
                        return nil
                    }, on: DispatchQueue(label: "faults.stopping-feedback"))
                    Feedback<Int, Stamped>(effect: { (count: Int) async -> Stamped? in
                        if count == stopAt + 1, let loop = holder.loop { stops.append(await loop.stop()) }
                        return nil
                    }, applying: .continueOnNewState)
                    Feedback<Int, Stamped>(effect: { count in
                        if count == stopAt + 2, let loop = holder.loop {
                            Task { stops.append(await loop.stop()) }
                        }
                        return nil
                    }).executeOnReducerThread()
                    checker.reducer
                }.start(options: SpinOptions(queue: queue))
                holder.set(loop)
                let tallies = Recorder<ProducerTally>()
                let finished = await onThreads(producers) { producer in
                    var tally = ProducerTally(producer: producer)
                    var sequence = 0
                    while sequence < 1_000_000 {
                        let result = loop.emit(Stamped(producer: producer, sequence: sequence))
                        tally.count(result, sequence: sequence)
                        if result != .accepted { break }
                        sequence += 1
                    }
                    tallies.append(tally)
                }
                #expect(finished)
                // The stop that wins is the first feedback's; the others may
                // never run (their states can come after the close). Every
                // stop that was called returns.
                #expect(await eventually { loop.isStopped && stops.count >= 1 }, "round \(round): no stop completed")
                let report = await loop.stop()
                #expect(await eventually { SpindleLiveObjects.current.effectTasks <= baseline.counts.effectTasks })
                #expect(stops.values.allSatisfy { $0 == report }, "round \(round)")
                let accepted = tallies.values.map(\.accepted).reduce(0, +)
                #expect(report == StopReport(reduced: accepted, discarded: 0), "round \(round)")
                #expect(report.reduced >= stopAt)
                #expect(checker.outOfOrder == 0)
                #expect(checker.gaps == 0)
                holder.set(nil)
            }
            await baseline.expectReturned()
        }

        // MARK: release without stop while producers emit

        @Test("releasing the last reference while threads emit: emits stay accepted, the loop drains and goes",
              arguments: stressQueues)
        func releasingTheLoopWhileThreadsEmitDrainsIt(queue: QueueKind) async throws {
            let baseline = await LiveBaseline.settle()
            var checkedEvents = 0
            for round in 0..<StressScale.rounds {
                let gear = Gear<Int>()
                let producers = 2
                let checker = OrderChecker(producers: producers)
                let gearTally = Locked(GearTally())
                let delivered = Counter()
                let weak = WeakLoop<Int, Stamped>()
                let tallies = Recorder<ProducerTally>()
                let gearDone = Flag()
                let propagated = Counter()
                do {
                    var strong: SpinLoop<Int, Stamped>? = try Spin(initialState: 0) {
                        Feedback<Int, Stamped>(attachedTo: gear, fromGear: { (item: Int) -> Stamped? in
                            delivered.add()
                            return Stamped(producer: -1, sequence: item)
                        })
                        Reducer<Int, Stamped> { count, event in
                            if event.producer < 0 {
                                gearTally.withLock { tally in
                                    if event.sequence != tally.last + 1 { tally.broken += 1 }
                                    tally.last = event.sequence
                                    tally.count += 1
                                }
                            } else {
                                checker.observe(event)
                            }
                            return count + 1
                        }
                    }.start(options: SpinOptions(queue: queue))
                    weak.set(strong)
                    // Threads emit through a weak reference (each emit holds
                    // the loop for its duration, so the last release may
                    // happen on a producer thread); one more feeds the gear.
                    Thread {
                        var item = 0
                        while !gearDone.isRaised {
                            gear.propagate(item)
                            item += 1
                            propagated.add()
                        }
                    }.start()
                    async let producing: Bool = onThreads(producers) { producer in
                        var tally = ProducerTally(producer: producer)
                        var sequence = 0
                        while let loop = weak.loop {
                            tally.count(loop.emit(Stamped(producer: producer, sequence: sequence)), sequence: sequence)
                            sequence += 1
                        }
                        tallies.append(tally)
                    }
                    _ = await eventually(within: 30) { checker.progress.current >= 1_000 + round * 100 }
                    // The test's reference is the last strong one but for
                    // the producers' momentary ones: drop it.
                    #expect(strong != nil)
                    strong = nil
                    let finished = await producing
                    #expect(finished, "round \(round): producers still see the loop")
                }
                // Gone: the loop drains what it accepted, detaches from the
                // gear and lets everything go.
                #expect(await eventually { gear.attachedCount == 0 }, "round \(round): still attached to the gear")
                gearDone.raise()
                let all = tallies.values.sorted { $0.producer < $1.producer }
                let accepted = all.map(\.accepted)
                #expect(all.allSatisfy { $0.stopped == 0 && $0.dropped == 0 },
                        "round \(round): an emit on a live (referenced) loop was refused")
                #expect(await eventually { checker.progress.current == accepted.reduce(0, +) },
                        "round \(round): accepted \(accepted.reduce(0, +)), reduced \(checker.progress.current)")
                await baseline.expectReturned()
                // The reducer thread has exited: its writes are done.
                #expect(checker.reducedPerProducer == accepted, "round \(round)")
                #expect(checker.outOfOrder == 0)
                #expect(checker.gaps == 0)
                let tally = gearTally.withLock { $0 }
                #expect(tally.broken == 0, "round \(round): gear items out of order or with a gap")
                #expect(tally.count <= delivered.current)
                checkedEvents += accepted.reduce(0, +) + tally.count
            }
            reportTotal("release-events", queue: name(of: queue), checkedEvents)
        }

        // MARK: a reducer that takes very long

        @Test("a very slow reducer keeps a full bounded queue's memory bounded: .block waits, .dropNewest drops",
              arguments: [OverflowPolicy.block, .dropNewest])
        func slowReducerKeepsTheRingBounded(policy: OverflowPolicy) async throws {
            let baseline = await LiveBaseline.settle()
            do {
                let capacity = 64
                let producers = 4
                let perProducer = 1_500
                let checker = OrderChecker(producers: producers, contiguous: policy == .block)
                // It sleeps: on a thread of its own, not the shared pool.
                let loop = try Spin(initialState: 0, feedbacks: [], reducer: Reducer { count, event in
                    usleep(100)  // a reducer 100 us per event, far slower than its producers
                    checker.observe(event)
                    return count + 1
                }).start(options: SpinOptions(executor: .dedicatedThread, queue: .bounded(capacity: capacity, overflow: policy)))
                let acceptedSoFar = Counter()
                let largestBacklog = Locked(0)
                let tallies = Recorder<ProducerTally>()
                let finished = await onThreads(producers) { producer in
                    var tally = ProducerTally(producer: producer)
                    for sequence in 0..<perProducer {
                        let result = loop.emit(Stamped(producer: producer, sequence: sequence))
                        tally.count(result, sequence: sequence)
                        if result == .accepted {
                            // Accepted (counted after the enqueue) minus reduced
                            // (read later): at most what waits in the ring plus
                            // the one being reduced.
                            let backlog = acceptedSoFar.add() - checker.progress.current
                            largestBacklog.withLock { $0 = max($0, backlog) }
                        }
                    }
                    tallies.append(tally)
                }
                #expect(finished, "producers did not finish: a deadlock")
                let report = await loop.stop()
                let all = tallies.values.sorted { $0.producer < $1.producer }
                let accepted = all.map(\.accepted).reduce(0, +)
                let dropped = all.map(\.dropped).reduce(0, +)
                let backlog = largestBacklog.withLock { $0 }
                #expect(backlog <= capacity + 1, "backlog \(backlog) exceeds the ring's capacity \(capacity)")
                #expect(report == StopReport(reduced: accepted, discarded: 0))
                #expect(accepted + dropped == producers * perProducer)
                #expect(loop.statistics.droppedEvents == dropped)
                if policy == .block {
                    #expect(dropped == 0)
                } else {
                    #expect(dropped > 0, "a 100 us reducer never filled the ring")
                }
                #expect(checker.reducedPerProducer == all.map(\.accepted))
                #expect(checker.outOfOrder == 0)
                #expect(checker.gaps == 0)
                stressLine("SPINDLE-STRESS slow-reducer policy=\(policy) accepted \(accepted), dropped \(dropped), largest backlog \(backlog) (capacity \(capacity))")
            }
            await baseline.expectReturned()
        }

        // MARK: effects that never finish

        @Test("stop returns while effects ignore cancellation and never finish; they are let go afterwards",
              arguments: stressQueues)
        func stopReturnsWhileEffectsNeverFinish(queue: QueueKind) async throws {
            let baseline = await LiveBaseline.settle()
            do {
                let gates = OpenOnce()
                let loops = 16
                let lateAnswers = Counter()
                let runsEntered = Counter()
                let spins = (0..<loops).map { _ in
                    Spin(initialState: 0) {
                        Feedback<Int, Int>(effect: { (_: Int) async -> Int? in
                            runsEntered.add()
                            await gates.wait()  // ignores cancellation
                            lateAnswers.add()
                            return 1
                        }, applying: .continueOnNewState)
                        Reducer<Int, Int> { state, event in state + event }
                    }
                }
                let running = try spins.map { try $0.start(options: SpinOptions(queue: queue)) }
                let accepted = Counter()
                let finished = await onThreads(4) { producer in
                    for index in 0..<2_000 where running[(index + producer) % loops].emit(1) == .accepted {
                        accepted.add()
                    }
                }
                #expect(finished)
                #expect(await eventually { runsEntered.current >= loops })
                // Every stop returns although every loop has runs stuck.
                let reports = Recorder<StopReport>()
                await withTaskGroup(of: Void.self) { group in
                    for loop in running { group.addTask { reports.append(await loop.stop()) } }
                }
                #expect(reports.count == loops)
                #expect(reports.values.map(\.reduced).reduce(0, +) == accepted.current)
                #expect(running.allSatisfy { $0.isStopped })
                let stuck = SpindleLiveObjects.current.effectTasks - baseline.counts.effectTasks
                #expect(stuck > 0, "no effect was still running at stop: the test proved nothing")
                // Let them go: their answers come after cancellation and are
                // discarded, never reduced.
                gates.open()
                await baseline.expectEffectTasksEnded()
                let states = running.map(\.state)
                #expect(states.reduce(0, +) == accepted.current, "a late answer was reduced")
                let discarded = running.map(\.statistics.lateEventsDiscarded).reduce(0, +)
                #expect(discarded == lateAnswers.current)
                #expect(running.map(\.statistics.effectRunsCancelled).reduce(0, +) >= stuck)
            }
            await baseline.expectReturned()
        }
    }
}
