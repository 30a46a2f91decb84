import Foundation
@_spi(Testing) @_spi(Benchmarks) @_spi(Tuning) import Spindle
import CSpindle
import Synchronization
import Testing
import SpindleTestSupport

extension StressSuite {
    /// Per-producer lanes (LANES.md) under Thread Sanitizer, with every
    /// emitting thread given a lane at its first emit (`LaneTuning.streak =
    /// 1`), so each case takes the lane path for certain: lanes opened while
    /// other threads stream, let go when a thread's table of 8 lanes wants
    /// the slot for another loop (12 loops per thread here), let go when the
    /// loop keeps idling, let go at thread exit, and left behind by loops
    /// that stop first. Checked: conservation per loop (accepted = reduced),
    /// each thread's order per loop, and every lane freed once the threads
    /// have exited and the loops are gone.
    @Suite("Per-producer lanes")
    struct LaneStressTests {
        @Test("threads stream into 12 loops in turn, lanes come and go; nothing lost, each in order",
              .timeLimit(.minutes(5)))
        func lanesComeAndGoAcrossLoops() async throws {
            let baseline = await LiveBaseline.settle()
            let lanesLive = spindle_live_lanes()
            let lanesCreated = spindle_lanes_created()
            let savedStreak = LaneTuning.streak
            LaneTuning.streak = 1
            defer { LaneTuning.streak = savedStreak }
            let producers = 4
            let loopCount = 12
            let bursts = max(40, StressScale.rounds * 4)
            let burst = 300
            do {
                let checkers = (0..<loopCount).map { _ in OrderChecker(producers: producers) }
                let loops = try checkers.map {
                    try Spin(initialState: 0, feedbacks: [], reducer: $0.reducer).start()
                }
                let accepted = (0..<loopCount).map { _ in Counter() }
                let finished = await onThreads(producers) { producer in
                    var random = SplitMix64(seed: UInt64(producer + 7))
                    var next = Array(repeating: 0, count: loopCount)
                    for _ in 0..<bursts {
                        let target = Int(random.next() % UInt64(loopCount))
                        var batch: [Stamped] = []
                        var sent = 0
                        while sent < burst {
                            if random.next() % 3 == 0 {
                                let size = min(Int(random.next() % 64) + 1, burst - sent)
                                batch.removeAll(keepingCapacity: true)
                                for offset in 0..<size {
                                    batch.append(Stamped(producer: producer, sequence: next[target] + offset))
                                }
                                let result = loops[target].emit(contentsOf: batch)
                                accepted[target].add(result.accepted)
                                next[target] += result.accepted
                                sent += size
                            } else {
                                if loops[target].emit(Stamped(producer: producer, sequence: next[target])) == .accepted {
                                    accepted[target].add()
                                    next[target] += 1
                                }
                                sent += 1
                            }
                        }
                    }
                }
                #expect(finished, "producers did not finish: a hang")
                for index in 0..<loopCount {
                    let report = await loops[index].stop()
                    #expect(report.reduced == accepted[index].current, "loop \(index): accepted \(accepted[index].current), reduced \(report.reduced)")
                    #expect(checkers[index].outOfOrder == 0 && checkers[index].gaps == 0,
                            "loop \(index): \(checkers[index].outOfOrder) out of order, \(checkers[index].gaps) gaps")
                }
                let lanesTaken = spindle_lanes_created() - lanesCreated
                #expect(lanesTaken > 0, "no thread took a lane")
                reportTotal("lane-events", queue: "lockFree", accepted.map(\.current).reduce(0, +))
                reportTotal("lanes-taken", queue: "lockFree", lanesTaken)
            }
            await baseline.expectReturned()
            let lanesFreed = await eventually { spindle_live_lanes() <= lanesLive }
            #expect(lanesFreed, "lanes left behind: \(spindle_live_lanes() - lanesLive)")
        }

        /// Lanes earned in bursts and let go in lulls: each producer thread
        /// alternates a burst (which earns it a lane, `LaneTuning.streak = 8`)
        /// with a lull of emits that mostly wait until the loop has reduced
        /// everything accepted so far (and 200 µs more), so the loop idles
        /// between them and the
        /// thread's lane is marked and then let go once drained, its next
        /// emits going through the shared queue (LANES.md, "Letting go").
        /// Checked: conservation, each thread's order across every switch
        /// between its lane and the shared queue, and every lane freed.
        @Test("lanes earned in bursts and let go in lulls; nothing lost, each in order",
              .timeLimit(.minutes(5)))
        func lanesEarnedInBurstsAndLetGoInLulls() async throws {
            let baseline = await LiveBaseline.settle()
            let lanesLive = spindle_live_lanes()
            let lanesCreated = spindle_lanes_created()
            let savedStreak = LaneTuning.streak
            LaneTuning.streak = 8
            defer { LaneTuning.streak = savedStreak }
            let producers = 2
            let rounds = max(30, StressScale.rounds * 3)
            do {
                let checker = OrderChecker(producers: producers)
                let loop = try Spin(initialState: 0, feedbacks: [], reducer: checker.reducer).start()
                let accepted = Counter()
                let finished = await onThreads(producers) { producer in
                    var random = SplitMix64(seed: UInt64(producer + 41))
                    var next = 0
                    func emitOne() {
                        if loop.emit(Stamped(producer: producer, sequence: next)) == .accepted {
                            accepted.add()
                            next += 1
                        }
                    }
                    for _ in 0..<rounds {
                        for _ in 0..<(100 + Int(random.next() % 200)) { emitOne() }
                        for _ in 0..<(5 + Int(random.next() % 6)) {
                            emitOne()
                            // Now and then the next emit comes at once: it
                            // finds a marked lane not yet drained, which
                            // must stay in use.
                            if random.next() % 3 == 0 { continue }
                            // Everything accepted so far reduced: the loop
                            // has drained (the other thread may refill it).
                            // The pause gives its runner time to end the
                            // slice and store idle, so the next emit finds
                            // the loop idle; how often it does changes what
                            // this case covers, never what it checks.
                            let target = accepted.current
                            while checker.progress.current < target { sched_yield() }
                            usleep(200)
                        }
                    }
                }
                #expect(finished, "producers did not finish: a hang")
                let report = await loop.stop()
                #expect(report.reduced == accepted.current, "accepted \(accepted.current), reduced \(report.reduced)")
                #expect(checker.outOfOrder == 0 && checker.gaps == 0,
                        "\(checker.outOfOrder) out of order, \(checker.gaps) gaps")
                reportTotal("lull-events", queue: "lockFree", accepted.current)
                reportTotal("lull-lanes-taken", queue: "lockFree", spindle_lanes_created() - lanesCreated)
            }
            await baseline.expectReturned()
            let lanesFreed = await eventually { spindle_live_lanes() <= lanesLive }
            #expect(lanesFreed, "lanes left behind: \(spindle_live_lanes() - lanesLive)")
        }

        /// Closed loops over lanes (LANES.md; `ScheduledLoop.waitForNextEvent`):
        /// each thread emits into its own loop, waits until the event is
        /// reduced, and emits again, now at once (the runner, waiting for
        /// the next event before its idle transition, takes it without
        /// going idle), now after a spin of about the wait's length (taken
        /// by the wait or just missed), now after a sleep (the wait sees
        /// nothing and backs off). Midway a stop lands while the threads
        /// still emit, often while a runner waits. Checked: conservation
        /// (accepted = reduced + discarded), each thread's order, every stop
        /// returns, and every lane freed.
        @Test("closed loops over lanes, on the pool and on dedicated threads: the runner's wait before idling loses nothing",
              .timeLimit(.minutes(5)), arguments: [ExecutorKind.sharedPool, .dedicatedThread])
        func closedLoopsOverLanes(executor: ExecutorKind) async throws {
            let baseline = await LiveBaseline.settle()
            let lanesLive = spindle_live_lanes()
            let savedStreak = LaneTuning.streak
            LaneTuning.streak = 1
            defer { LaneTuning.streak = savedStreak }
            let producers = 2
            let rounds = max(10, StressScale.rounds)
            let roundTrips = 400
            do {
                for round in 0..<rounds {
                    let checkers = (0..<producers).map { _ in OrderChecker(producers: 1) }
                    let options = SpinOptions(executor: executor == .dedicatedThread ? .dedicatedThread : .sharedPool)
                    let loops = try checkers.map { try Spin(initialState: 0, feedbacks: [], reducer: $0.reducer).start(options: options) }
                    let accepted = (0..<producers).map { _ in Counter() }
                    let stoppedAt = (0..<producers).map { _ in Counter() }
                    async let producing: Bool = onThreads(producers) { producer in
                        var random = SplitMix64(seed: UInt64(round * 31 + producer + 5))
                        let loop = loops[producer], checker = checkers[producer]
                        var sequence = 0
                        while true {
                            let result = loop.emit(Stamped(producer: 0, sequence: sequence))
                            guard result == .accepted else {
                                stoppedAt[producer].add(1)
                                break
                            }
                            accepted[producer].add()
                            sequence += 1
                            // Until reduced, or the stop has thrown it away.
                            while checker.progress.current < sequence, !loop.isStopped { sched_yield() }
                            switch random.next() % 8 {
                            case 0: usleep(UInt32(20 + random.next() % 200))
                            case 1, 2:
                                let until = DispatchTime.now().uptimeNanoseconds + 500 + random.next() % 3_000
                                while DispatchTime.now().uptimeNanoseconds < until {}
                            default: break
                            }
                        }
                    }
                    // Stop while the threads still emit.
                    _ = await eventually(within: 60) { checkers.allSatisfy { $0.progress.current >= roundTrips } }
                    var reports: [StopReport] = []
                    for (index, loop) in loops.enumerated() {
                        reports.append(await loop.stop(index % 2 == 0 ? .drain : .discardPending))
                    }
                    let finished = await producing
                    #expect(finished, "round \(round): producers did not finish: a hang")
                    for index in 0..<producers {
                        #expect(stoppedAt[index].current == 1, "round \(round), loop \(index): the thread never saw the stop")
                        #expect(reports[index].reduced + reports[index].discarded == accepted[index].current,
                                "round \(round), loop \(index): accepted \(accepted[index].current), \(reports[index])")
                        #expect(reports[index].reduced == checkers[index].reduced)
                        #expect(checkers[index].outOfOrder == 0 && checkers[index].gaps == 0,
                                "round \(round), loop \(index): \(checkers[index].outOfOrder) out of order, \(checkers[index].gaps) gaps")
                    }
                    if round == rounds - 1 {
                        reportTotal("closed-lane-round-trips", queue: "lockFree", accepted.map(\.current).reduce(0, +))
                    }
                }
            }
            await baseline.expectReturned()
            let lanesFreed = await eventually { spindle_live_lanes() <= lanesLive }
            #expect(lanesFreed, "lanes left behind: \(spindle_live_lanes() - lanesLive)")
        }

        /// A lane's events are reduced a run at a time (one call to the
        /// reducer's specialized loop) unless someone needs the states in
        /// between. A `states` subscription made on the lane's thread before
        /// its next emits must still see every state those emits make. (The
        /// per-run check this relies on matters only when a subscription
        /// lands between a slice's start and its read of the lane's count, a
        /// few instructions: this case checks the guarantee end to end, and
        /// did not fail with that check removed.)
        @Test("a subscriber on a lane's thread sees every state its next emits make",
              .timeLimit(.minutes(2)))
        func aSubscriptionBeforeLaneEmitsSeesEveryState() async throws {
            let baseline = await LiveBaseline.settle()
            let savedStreak = LaneTuning.streak
            LaneTuning.streak = 1
            defer { LaneTuning.streak = savedStreak }
            let rounds = max(5, StressScale.rounds)
            let perHalf = 5_000
            do {
                let loop = try Spin(initialState: 0, feedbacks: [], reducer: Reducer<Int, Int> { state, _ in state + 1 }).start()
                let collectors = Locked<[Task<[Int], Never>]>([])
                let finished = await onThreads(1) { _ in
                    for _ in 0..<rounds {
                        for _ in 0..<perHalf { loop.emit(1) }
                        let stream = loop.states(bufferingPolicy: .unbounded)  // every state is checked
                        let collector = Task {
                            var values: [Int] = []
                            for await value in stream { values.append(value) }
                            return values
                        }
                        collectors.withLock { $0.append(collector) }
                        for _ in 0..<perHalf { loop.emit(1) }
                    }
                }
                #expect(finished, "the producer did not finish: a hang")
                let report = await loop.stop()
                #expect(report.reduced == rounds * perHalf * 2)
                for (round, collector) in collectors.withLock({ $0 }).enumerated() {
                    let values = await collector.value
                    let gaps = zip(values, values.dropFirst()).filter { $1 != $0 + 1 }.count
                    #expect(gaps == 0 && values.first.map { $0 <= (round * 2 + 1) * perHalf } == true
                                && values.last == rounds * perHalf * 2,
                            "round \(round): \(gaps) gaps, first \(values.first ?? -1), last \(values.last ?? -1)")
                }
            }
            await baseline.expectReturned()
        }
    }
}
