import Foundation
@_spi(Testing) @_spi(Benchmarks) @_spi(Tuning) import Spindle
import Testing
import SpindleTestSupport

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
    /// Issue 4, item 6: a bounded ring kept at capacity by four producer
    /// threads, under each overflow policy. `.block` loses nothing and never
    /// deadlocks, even with a feedback emitting from the reducer thread
    /// itself and another one emitting from a dispatch queue into the full
    /// ring; `.dropNewest` answers `.dropped` with an exact count.
    @Suite("Bounded ring at capacity")
    struct BoundedOverflowStressTests {
        static let capacities = [1, 8, 64]
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

        @Test("a full .block ring loses nothing and never deadlocks, even with emits from the reducer thread",
              arguments: capacities)
        func blockingRingLosesNothingAndNeverDeadlocks(capacity: Int) async throws {
            let baseline = await LiveBaseline.settle()
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
                reportTotal("events", queue: "ring(\(capacity),block)", report.reduced)
            }
            await baseline.expectReturned()
        }

        @Test("a full .dropNewest ring answers .dropped, counts exactly, and reduces exactly what it accepted",
              arguments: capacities)
        func droppingRingCountsExactly(capacity: Int) async throws {
            let baseline = await LiveBaseline.settle()
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
                #expect(dropped > 0, "the ring never filled: the test did not exercise .dropNewest")
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
    }
}
