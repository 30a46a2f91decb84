import Foundation
@_spi(Testing) @_spi(Benchmarks) @_spi(Tuning) import Spindle
import Testing
import SpindleTestSupport
import CSpindle

/// Events of the bounded-ring tests: producer items, echoes emitted by an
/// inline feedback on the reducer thread, and answers from a feedback on a
/// dispatch queue.
enum BoundedEvent: Sendable {
    case item(Stamped)
    case echo
    case fromQueue
}

struct BoundedState: Sendable {
    var items = 0
    var echoes = 0
    var fromQueue = 0
    /// The producer item that made this state, if it was one.
    var lastItem: Stamped?
    var total: Int { items + echoes + fromQueue }
}

extension StressSuite {
    /// Issue 4, item 6: a bounded queue kept at capacity by four producer
    /// threads, under each overflow policy. `.block` loses nothing and never
    /// deadlocks, even with a feedback emitting from the reducer thread
    /// itself and another one emitting from a dispatch queue into the full
    /// queue; `.dropNewest` answers `.dropped` with an exact count. Every
    /// emitting thread may take a lane at once (`LaneTuning.streak = 1`):
    /// a capacity of 4,096 shares 256 events with each of up to 8 lanes
    /// (issue 51), the smaller ones have no lanes.
    @Suite("Bounded queue at capacity")
    struct BoundedOverflowStressTests {
        static let capacities = [1, 8, 64, 4096]
        static var perProducer: Int { max(1_000, StressScale.eventsPerQueue / 200) }

        /// Every item whose sequence is a multiple of 4 gets an echo from the
        /// reducer thread; every multiple of 8 an answer from a dispatch queue.
        static func spin(_ checker: OrderChecker) -> Spin<BoundedState, BoundedEvent> {
            Spin(initialState: BoundedState()) {
                Feedback<BoundedState, BoundedEvent>(effect: { state in
                    guard let item = state.lastItem, item.sequence % 4 == 0 else { return nil }
                    return .echo
                }).executeOnReducerThread()
                Feedback<BoundedState, BoundedEvent>(effect: { state in
                    guard let item = state.lastItem, item.sequence % 8 == 0 else { return nil }
                    return .fromQueue
                }, on: DispatchQueue(label: "bounded.answers"))
                Reducer<BoundedState, BoundedEvent> { state, event in
                    var state = state
                    state.lastItem = nil
                    switch event {
                    case .item(let item):
                        checker.observe(item)
                        state.items += 1
                        state.lastItem = item
                    case .echo: state.echoes += 1
                    case .fromQueue: state.fromQueue += 1
                    }
                    return state
                }
            }
        }

        @Test("a full .block queue loses nothing and never deadlocks, even with emits from the reducer thread",
              arguments: capacities)
        func blockingRingLosesNothingAndNeverDeadlocks(capacity: Int) async throws {
            let baseline = await LiveBaseline.settle()
            let savedStreak = LaneTuning.streak
            LaneTuning.streak = 1
            defer { LaneTuning.streak = savedStreak }
            let lanesCreated = spindle_lanes_created()
            do {
                let producers = 4
                let perProducer = Self.perProducer
                let payloads = PayloadSlots(producers: producers, perProducer: perProducer)
                let checker = OrderChecker(producers: producers, payloads: payloads)
                let loop = try Self.spin(checker).start(options: SpinOptions(queue: .bounded(capacity: capacity, overflow: .block)))
                let tallies = Recorder<ProducerTally>()
                let finished = await onThreads(producers) { producer in
                    var tally = ProducerTally(producer: producer)
                    for sequence in 0..<perProducer {
                        payloads.write(producer: producer, sequence: sequence)
                        tally.count(loop.emit(.item(Stamped(producer: producer, sequence: sequence))), sequence: sequence)
                    }
                    tallies.append(tally)
                }
                #expect(finished, "producers blocked for 5 minutes: a deadlock")
                let items = producers * perProducer
                let echoes = producers * ((perProducer + 3) / 4)
                let fromQueue = producers * ((perProducer + 7) / 8)
                // Every state reaches both feedbacks, so the totals are
                // known; wait for them before stopping (a stop would refuse
                // the feedbacks' last answers).
                let settled = await eventually { loop.statistics.reducedEvents >= items + echoes + fromQueue }
                #expect(settled, "reduced \(loop.statistics.reducedEvents) of \(items + echoes + fromQueue): lost or stuck")
                let report = await loop.stop()
                let state = loop.state

                #expect(tallies.values.allSatisfy { $0.accepted == perProducer }, ".block answered something else")
                #expect(state.items == items)
                #expect(state.echoes == echoes)
                #expect(state.fromQueue == fromQueue)
                #expect(report == StopReport(reduced: items + echoes + fromQueue, discarded: 0))
                #expect(loop.statistics.droppedEvents == 0)
                #expect(checker.outOfOrder == 0)
                #expect(checker.gaps == 0)
                #expect(checker.badPayloads == 0)
                if capacity >= 1024 { #expect(spindle_lanes_created() > lanesCreated, "no producer took a lane") }
                reportTotal("events", queue: "ring(\(capacity),block)", report.reduced)
            }
            await baseline.expectReturned()
        }

        @Test("a full .dropNewest queue answers .dropped, counts exactly, and reduces exactly what it accepted",
              arguments: capacities)
        func droppingRingCountsExactly(capacity: Int) async throws {
            let baseline = await LiveBaseline.settle()
            let savedStreak = LaneTuning.streak
            LaneTuning.streak = 1
            defer { LaneTuning.streak = savedStreak }
            do {
                let producers = 4
                let perProducer = Self.perProducer
                let payloads = PayloadSlots(producers: producers, perProducer: perProducer)
                let checker = OrderChecker(producers: producers, contiguous: false, payloads: payloads)
                let loop = try Self.spin(checker).start(options: SpinOptions(queue: .bounded(capacity: capacity, overflow: .dropNewest)))
                let tallies = Recorder<ProducerTally>()
                let acceptedEchoes = Counter()
                let acceptedAnswers = Counter()
                let finished = await onThreads(producers) { producer in
                    var tally = ProducerTally(producer: producer)
                    for sequence in 0..<perProducer {
                        payloads.write(producer: producer, sequence: sequence)
                        let result = loop.emit(.item(Stamped(producer: producer, sequence: sequence)))
                        tally.count(result, sequence: sequence)
                        if result == .accepted, sequence % 4 == 0 { acceptedEchoes.add() }
                        if result == .accepted, sequence % 8 == 0 { acceptedAnswers.add() }
                    }
                    tallies.append(tally)
                }
                #expect(finished, "producers did not finish: a hang")
                // Inline echoes are never dropped (they skip the ring); the
                // dispatch-queue answers may be, and are counted as drops.
                let all = tallies.values.sorted { $0.producer < $1.producer }
                let accepted = all.map(\.accepted).reduce(0, +)
                let dropped = all.map(\.dropped).reduce(0, +)
                let settled = await eventually {
                    let statistics = loop.statistics
                    let state = loop.state
                    return state.items == accepted && state.echoes == acceptedEchoes.current
                        && state.fromQueue + (statistics.droppedEvents - dropped) == acceptedAnswers.current
                        && statistics.reducedEvents == state.total
                }
                #expect(settled)
                let report = await loop.stop()
                let state = loop.state
                let statistics = loop.statistics

                #expect(all.count == producers)
                #expect(all.allSatisfy { $0.accepted + $0.dropped == perProducer && $0.stopped == 0 },
                        "accepted + dropped = attempted, per producer")
                // A large queue may keep up with its producers; the exact
                // fill of every share is `aFullQueueHoldsExactlyItsCapacity`.
                if capacity < 1024 { #expect(dropped > 0, "the queue never filled: the test did not exercise .dropNewest") }
                #expect(state.items == accepted)
                #expect(state.echoes == acceptedEchoes.current)
                #expect(report.reduced == state.total)
                #expect(report.discarded == 0)
                // Drops: the producers' plus the dispatch-queue feedback's.
                #expect(statistics.droppedEvents - dropped == acceptedAnswers.current - state.fromQueue)
                #expect(checker.reducedPerProducer == all.map(\.accepted))
                #expect(checker.sequenceSum == all.map(\.acceptedSequenceSum))
                #expect(checker.outOfOrder == 0)
                #expect(checker.badPayloads == 0)
                reportTotal("events", queue: "ring(\(capacity),dropNewest)", accepted + dropped)
            }
            await baseline.expectReturned()
        }
    
        /// Issue 51: the bound is exact with lanes. With the reducer held on
        /// its first event, 12 threads emit under `.dropNewest` until each
        /// is refused once: 8 of them fill a lane each (its share, 256
        /// events) and the other 4 the shared queue's share (2,048), so
        /// exactly the capacity is accepted besides the event being reduced,
        /// never more; then everything accepted is reduced, each thread in
        /// order.
        @Test("a bounded queue filled by 12 threads holds exactly its capacity, lanes and shared queue together")
        func aFullQueueHoldsExactlyItsCapacity() async throws {
            let baseline = await LiveBaseline.settle()
            let savedStreak = LaneTuning.streak
            defer { LaneTuning.streak = savedStreak }
            let lanesCreated = spindle_lanes_created()
            do {
                let capacity = 4096
                let producers = 12
                let held = try await HeldLoop.start(
                    capacity: capacity, policy: .dropNewest, producers: producers + 1, firstProducer: producers)
                let loop = held.loop
                let checker = held.checker
                LaneTuning.streak = 1
                let tallies = Recorder<ProducerTally>()
                let finished = await onThreads(producers) { producer in
                    tallies.append(.emittingUntilRefused(producer: producer) { loop.emit($0) })
                }
                #expect(finished, "producers did not finish: a hang")
                let all = tallies.values
                let accepted = all.map(\.accepted).reduce(0, +)
                #expect(accepted == capacity, "accepted \(accepted) while one event was being reduced: the bound is \(capacity)")
                #expect(all.allSatisfy { $0.dropped == 1 && $0.stopped == 0 })
                #expect(spindle_lanes_created() - lanesCreated >= 8, "the producers did not take every lane")
                held.release()
                let report = await loop.stop()
                #expect(report == StopReport(reduced: accepted + 1, discarded: 0))
                #expect(loop.statistics.droppedEvents == producers)
                #expect(checker.reducedPerProducer.prefix(producers).reduce(0, +) == accepted)
                #expect(checker.outOfOrder == 0)
            }
            await baseline.expectReturned()
        }

        /// A batch on a full lane (issue 51): with the reducer held, a
        /// thread's lane (capacity 1,024: a share of 64) takes the first 64
        /// events of a `.dropNewest` batch and drops the rest, whatever room
        /// the shared queue has; a `.block` batch waits at the same point
        /// and finishes once the reducer runs, in order.
        @Test("a batch on a full lane: .dropNewest keeps the lane's share, .block waits for it", arguments: [OverflowPolicy.dropNewest, .block])
        func aBatchOnAFullLane(policy: OverflowPolicy) async throws {
            let baseline = await LiveBaseline.settle()
            let savedStreak = LaneTuning.streak
            defer { LaneTuning.streak = savedStreak }
            do {
                let held = try await HeldLoop.start(capacity: 1024, policy: policy, producers: 2, firstProducer: 1)
                let loop = held.loop
                let checker = held.checker
                LaneTuning.streak = 1
                let results = Recorder<EmitBatchResult>()
                let batchSent = Counter()
                async let finished = onThreads(1) { _ in
                    // The first emit goes through the shared queue and opens the lane.
                    _ = loop.emit(Stamped(producer: 0, sequence: 0))
                    batchSent.add()
                    let batch = (1...100).map { Stamped(producer: 0, sequence: $0) }
                    results.append(loop.emit(contentsOf: batch))
                }
                if policy == .block {
                    // The batch waits for the reducer: release it once the
                    // batch is under way (it cannot finish before).
                    #expect(await eventually { batchSent.current == 1 })
                    held.release()
                }
                #expect(await finished, "the producer did not finish: a hang")
                let result = try #require(results.values.first)
                if policy == .dropNewest {
                    #expect(result == EmitBatchResult(accepted: 64, dropped: 36, stopped: 0))
                    held.release()
                } else {
                    #expect(result == EmitBatchResult(accepted: 100, dropped: 0, stopped: 0))
                }
                let report = await loop.stop()
                #expect(report.reduced == 2 + result.accepted)
                #expect(checker.outOfOrder == 0 && checker.gaps == 0)
            }
            await baseline.expectReturned()
        }
}
}

/// A bounded loop whose reducer holds the first event it takes until
/// `release()`: every later event waits in the queue, so a test can fill
/// the queue's shares exactly.
struct HeldLoop: Sendable {
    let loop: SpinLoop<Int, Stamped>
    /// Sees every reduced event (producers `0..<producers`).
    let checker: OrderChecker
    private let held: DispatchSemaphore

    /// Starts the loop and has it take one event of `firstProducer` and hold
    /// it; the caller's emit takes no lane (`LaneTuning.streak` is left at
    /// `UInt32.max`: set it after).
    static func start(capacity: Int, policy: OverflowPolicy, producers: Int, firstProducer: Int) async throws -> HeldLoop {
        let held = DispatchSemaphore(value: 0)
        let holding = Counter()
        let checker = OrderChecker(producers: producers, contiguous: false)
        let spin = Spin<Int, Stamped>(initialState: 0, feedbacks: [], reducer: Reducer { count, event in
            if count == 0 {
                holding.add()
                held.wait()
            }
            checker.observe(event)
            return count + 1
        })
        let loop = try spin.start(options: SpinOptions(queue: .bounded(capacity: capacity, overflow: policy)))
        LaneTuning.streak = UInt32.max
        #expect(loop.emit(Stamped(producer: firstProducer, sequence: 0)) == .accepted)
        #expect(await eventually { holding.current == 1 }, "the reducer never took the first event")
        return HeldLoop(loop: loop, checker: checker, held: held)
    }

    func release() { held.signal() }
}
