import Foundation
@_spi(Testing) @_spi(Benchmarks) @_spi(Tuning) import Spindle
import Testing
import SpindleTestSupport

/// The loop the soak's producers currently feed, and what they accepted.
final class SoakTarget: Sendable {
    let generation: Int
    let loop: SpinLoop<Int, Stamped>
    let checker: OrderChecker
    /// Per producer: events this loop accepted from it.
    let accepted: [Counter]
    /// Producers that were answered `.stopped` and moved on to the next loop.
    let movedOn = Counter()

    init(generation: Int, queue: QueueKind, producers: Int) throws {
        self.generation = generation
        let checker = OrderChecker(producers: producers)
        self.checker = checker
        accepted = (0..<producers).map { _ in Counter() }
        loop = try Spin(initialState: 0) {
            // A feedback on a queue sees every state (no events back).
            Feedback<Int, Stamped>(effect: { (_: Int) -> Stamped? in nil }, on: DispatchQueue(label: "soak.feedback"))
            checker.reducer
        }.start(options: SpinOptions(queue: queue))
    }
}

extension StressSuite {
    /// Issue 4, item 8: a soak at full rate (`SPINDLE_SOAK=1`, length
    /// `SPINDLE_SOAK_SECONDS`, default 60). Two producer threads emit without
    /// pause while the test replaces the loop every two seconds, cycling
    /// through the queues; producers move to the new loop when the old one
    /// answers `.stopped`. RSS, sampled every second from /proc/self/statm,
    /// must be flat after warm-up.
    @Suite("Soak (SPINDLE_SOAK=1)", .enabled(if: StressScale.soakEnabled))
    struct SoakTests {
        @Test("a full-rate soak keeps every loop's books and a flat RSS")
        func fullRateSoakKeepsAFlatResidentSetSize() async throws {
            let baseline = await LiveBaseline.settle()
            let seconds = StressScale.soakSeconds
            let warmUp = max(5, seconds / 6)
            let producers = 2
            var checked = 0
            var samples: [Int] = []
            do {
                let queues = stressQueues
                let current = Locked(try SoakTarget(generation: 0, queue: queues[0], producers: producers))
                let done = Flag()
                async let producing: Bool = onThreads(producers, within: Double(seconds) + 300) { producer in
                    var target = current.withLock { $0 }
                    var sequence = 0
                    while !done.isRaised {
                        // Keep the unbounded queues' backlog bounded: this
                        // measures leaks, not a queue growing under overload.
                        if target.accepted.reduce(0, { $0 + $1.current }) - target.checker.progress.current > 50_000 {
                            sched_yield()
                            continue
                        }
                        switch target.loop.emit(Stamped(producer: producer, sequence: sequence)) {
                        case .accepted:
                            target.accepted[producer].add()
                            sequence += 1
                        case .dropped:
                            continue
                        case .stopped:
                            target.movedOn.add()
                            let previous = target.generation
                            while !done.isRaised {
                                target = current.withLock { $0 }
                                if target.generation != previous { break }
                                sched_yield()
                            }
                            sequence = 0
                        }
                    }
                }
                var finished: [SoakTarget] = []
                let start = ContinuousClock.now
                var generation = 0
                var postWarmUp = -1
                for second in 1...seconds {
                    try? await Task.sleep(until: start + .seconds(second))
                    samples.append(ProcessProbe.residentBytes())
                    if second == warmUp { postWarmUp = samples.last ?? -1 }
                    if second % 2 == 0 {
                        generation += 1
                        let next = try SoakTarget(generation: generation, queue: queues[generation % queues.count], producers: producers)
                        let old = current.withLock { target -> SoakTarget in
                            defer { target = next }
                            return target
                        }
                        await old.loop.stop()
                        finished.append(old)
                    }
                    // Check and let go of the stopped loops as we go, once
                    // both producers have moved on (their counts are final).
                    for target in finished {
                        #expect(await eventually { target.movedOn.current == producers })
                        checked += checkSoakTarget(target, producers: producers)
                    }
                    finished = []
                }
                done.raise()
                #expect(await producing)
                let last = current.withLock { $0 }
                await last.loop.stop()
                checked += checkSoakTarget(last, producers: producers)

                // Flat: no sample after warm-up above the post-warm-up one
                // by more than 10% + 16 MiB.
                let mib = 1 << 20
                let limit = postWarmUp + postWarmUp / 10 + 16 * mib
                let afterWarmUp = samples.dropFirst(warmUp)
                #expect(postWarmUp > 0)
                #expect(afterWarmUp.allSatisfy { $0 <= limit },
                        "RSS grew: \(postWarmUp / mib) MiB after warm-up, then up to \((afterWarmUp.max() ?? 0) / mib) MiB (limit \(limit / mib) MiB)")
                stressLine("SPINDLE-STRESS soak queue=all \(checked) events over \(seconds) s, \(generation + 1) loops; RSS MiB per second: \(samples.map { $0 / mib })")
            }
            await baseline.expectReturned()
        }
    }
}

/// A stopped soak loop's books: every event a producer was told accepted was
/// reduced, in order. - Returns: the events checked.
private func checkSoakTarget(_ target: SoakTarget, producers: Int) -> Int {
    let accepted = target.accepted.map(\.current)
    #expect(target.loop.isStopped)
    #expect(target.checker.reducedPerProducer == accepted, "loop \(target.generation)")
    #expect(target.checker.outOfOrder == 0, "loop \(target.generation)")
    #expect(target.checker.gaps == 0, "loop \(target.generation)")
    #expect(target.loop.statistics.reducedEvents == accepted.reduce(0, +), "loop \(target.generation)")
    return accepted.reduce(0, +)
}
