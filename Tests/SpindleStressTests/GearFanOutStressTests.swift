import Dispatch
@_spi(Testing) @_spi(Benchmarks) @_spi(Tuning) import Spindle
import SpindleQueueFixture
import Testing
import SpindleTestSupport

/// An item on the gear: from a producer thread (`source < 0`: thread
/// `-source - 1`) or crossing from a loop (`source` = that loop's id).
struct GearItem: Sendable {
    let source: Int
    let sequence: Int
}

/// A loop attached to the gear: its item count and what the last one was.
struct FanOutState: Sendable {
    var reduced = 0
    var last: GearItem?
}

/// Per-loop, reducer-thread-only check that each source's items arrive in
/// order with no gap: a loop receives, from each source, one contiguous run
/// of that source's items (from when it attached to when it stopped).
final class GearChecker: @unchecked Sendable {
    // @unchecked: reducer thread only while the loop runs; read after stop.
    private(set) var first: [Int: Int] = [:]
    private(set) var last: [Int: Int] = [:]
    private(set) var count: [Int: Int] = [:]
    private(set) var broken = 0

    func observe(_ item: GearItem) {
        if let previous = last[item.source], item.sequence != previous + 1 { broken += 1 }
        if first[item.source] == nil { first[item.source] = item.sequence }
        last[item.source] = item.sequence
        count[item.source, default: 0] += 1
    }
}

/// One loop of the fan-out and everything the test keeps about it.
final class FanOutMember: Sendable {
    let id: Int
    let loop: SpinLoop<FanOutState, GearItem>
    let checker: GearChecker
    /// Items the gear handed to this loop's gear → loop feedback.
    let delivered: Counter
    /// Items this loop sent across the gear.
    let crossed: Counter
    let mode: StopMode
    private let report = Locked<StopReport?>(nil)

    init(id: Int, gear: Gear<GearItem>, queue: QueueKind, mode: StopMode) throws {
        self.id = id
        self.mode = mode
        let checker = GearChecker()
        let delivered = Counter()
        let crossed = Counter()
        self.checker = checker
        self.delivered = delivered
        self.crossed = crossed
        loop = try Spin(initialState: FanOutState()) {
            // gear → loop: every item propagated while attached.
            Feedback<FanOutState, GearItem>(attachedTo: gear, fromGear: { (item: GearItem) -> GearItem? in
                delivered.add()
                return item
            })
            // loop → gear: every 16th producer item crosses back, tagged
            // with this loop (runs on the feedback's serial queue: one
            // producer per loop, so its items are in order). On a queue,
            // not the loop's executor: this test covers the queued gear
            // feedback; a pool thread waiting in such an emit is covered by
            // the blocking-chain stress test.
            Feedback<FanOutState, GearItem>(attachedTo: gear, toGear: { (state: FanOutState) -> GearItem? in
                guard let last = state.last, last.source < 0, last.sequence % 16 == 0 else { return nil }
                return GearItem(source: id, sequence: crossed.add() - 1)
            }, on: DispatchQueue(label: "fan-out.crossing.\(id)"))
            Reducer<FanOutState, GearItem> { state, item in
                checker.observe(item)
                return FanOutState(reduced: state.reduced + 1, last: item)
            }
        // Half the spins park at once when idle (no polling): more
        // park/wake races, and fewer idle reducers polling their queue.
        }.start(options: {
            var options = SpinOptions(queue: queue)
            options.spinsBeforeParking = id % 2 == 0 ? 0 : 2000
            return options
        }())
    }

    func stop() async {
        let result = await loop.stop(mode)
        report.withLock { $0 = result }
    }

    var stopReport: StopReport? { report.withLock { $0 } }
}

extension StressSuite {
    /// Issue 4, item 5: one gear, 16 spins attached; producer threads
    /// propagate into it while spins send items across it and the test keeps
    /// stopping spins and starting new ones. Each spin receives, from each
    /// source, a gapless in-order run; every item handed to a spin is reduced
    /// or refused at its gate; spins that stay attached get everything.
    @Suite("Gear fan-out")
    struct GearFanOutStressTests {
        @Test("items crossing a gear while 16 spins start and stop arrive in order, gapless, accounted")
        func itemsCrossingAGearWhileSpinsChurnArriveInOrder() async throws {
            let baseline = await LiveBaseline.settle()
            do {
                let perProducer = max(1_000, StressScale.eventsPerQueue / 2_000)
                let producers = 2
                let slots = 16
                let steadySlots = 4  // never stopped before the end
                let gear = Gear<GearItem>()
                let queues: [QueueKind] = [.lockFree, .bounded(capacity: 256, overflow: .block), .locked]
                var nextID = 0
                func member(_ slot: Int) throws -> FanOutMember {
                    defer { nextID += 1 }
                    // The steady spins drain at the end (they are checked
                    // for every item); every fourth replacement discards.
                    return try FanOutMember(
                        id: nextID, gear: gear, queue: queues[nextID % queues.count],
                        mode: nextID >= steadySlots && nextID % 4 == 3 ? .discardPending : .drain)
                }
                let started = ContinuousClock.now
                var live = try (0..<slots).map { try member($0) }
                var retired: [FanOutMember] = []
                #expect(gear.attachedCount == slots)

                let producersDone = Counter()
                async let producersFinished: Bool = onThreads(producers) { producer in
                    for sequence in 0..<perProducer {
                        gear.propagate(GearItem(source: -producer - 1, sequence: sequence))
                    }
                    producersDone.add()
                }
                // Churn: stop one of the other slots and start a fresh spin in
                // its place, over and over, while the producers run.
                var churns = 0
                let churnable = slots - steadySlots
                while producersDone.current < producers {
                    let slot = steadySlots + churns % churnable
                    let old = live[slot]
                    live[slot] = try member(slot)
                    await old.stop()
                    retired.append(old)
                    churns += 1
                    try? await Task.sleep(for: .milliseconds(2))
                    if churns >= StressScale.rounds * 10 { break }
                }
                let finished = await producersFinished
                let producedIn = ContinuousClock.now - started
                #expect(finished, "producers did not finish: a hang")
                for member in live { await member.stop() }
                let all = retired + live
                // Late deliveries (a propagate that took the subscriber list just
                // before a detach) are refused at the gate; wait until no worker
                // of any stopped spin is left before closing the books.
                let workersGone = await eventually {
                    let now = SpindleLiveObjects.current
                    return now.feedbackWorkers <= baseline.counts.feedbackWorkers
                }
                #expect(workersGone, "feedback workers still alive: \(SpindleLiveObjects.current)")
                #expect(gear.attachedCount == 0)

                var reducedTotal = 0
                for member in all {
                    guard let report = member.stopReport else {
                        Issue.record("spin \(member.id) has no stop report")
                        continue
                    }
                    let statistics = member.loop.statistics
                    let checker = member.checker
                    #expect(checker.broken == 0, "spin \(member.id): a source's items out of order or with a gap")
                    #expect(report.reduced == member.loop.state.reduced)
                    #expect(report.reduced == checker.count.values.reduce(0, +))
                    #expect(statistics.reducedEvents == report.reduced)
                    // Every delivered item was reduced, discarded at stop, or refused.
                    #expect(member.delivered.current == report.reduced + report.discarded + statistics.rejectedAfterStop,
                            "spin \(member.id): delivered \(member.delivered.current), \(report), refused \(statistics.rejectedAfterStop)")
                    if member.mode == .drain { #expect(report.discarded == 0) }
                    reducedTotal += report.reduced
                }
                // The steady spins were attached before the first item and
                // drained at the end: every producer item, once, in order.
                for member in all.filter({ $0.id < steadySlots }) {
                    for producer in 0..<producers {
                        let source = -producer - 1
                        #expect(member.checker.first[source] == 0, "spin \(member.id), producer \(producer)")
                        #expect(member.checker.last[source] == perProducer - 1, "spin \(member.id), producer \(producer)")
                        #expect(member.checker.count[source] == perProducer, "spin \(member.id), producer \(producer)")
                    }
                }
                let crossed = all.map(\.crossed.current).reduce(0, +)
                #expect(crossed > 0, "no item crossed the gear")
                #expect(churns > 0, "no spin was stopped and replaced while items flowed")
                stressLine("SPINDLE-STRESS fanout queue=mixed \(reducedTotal) items reduced over \(all.count) spins (\(churns) replaced, \(crossed) crossed between spins); producers took \(producedIn)")
            }
            await baseline.expectReturned()
        }
    }
}
