import Dispatch
import Foundation
@_spi(Testing) @_spi(Benchmarks) @_spi(Tuning) import Spindle
import Testing
import SpindleTestSupport

/// An event stamped with its producer and the moment it was emitted.
struct WakeEvent: Sendable {
    let producer: Int
    /// `DispatchTime.now().uptimeNanoseconds` just before the emit.
    let emittedAt: UInt64
}

/// A loop's count, and the longest any of its events waited between its
/// emit and its reduction.
struct WakeState: Sendable {
    var reduced = 0
    var longestWait: UInt64 = 0
}

extension StressSuite {
    /// The lost wake-up hunt: thousands of loops that go idle (their
    /// executor's threads park) and are woken again and again by producer
    /// threads picking loops at random. Every accepted event must be
    /// reduced, and none may wait more than a second: an event left in the
    /// queue of a loop nobody scheduled would wait for the next emit to that
    /// loop, or for ever. (A bound on a lost wake-up, not a performance goal:
    /// each producer lets at most `chunk` of its events be in flight.)
    @Suite("Idle loops woken")
    struct IdleWakeStressTests {
        /// Loop `index`'s executor kind: half on the shared pool, a quarter
        /// on a private pool, a quarter on eight serial queues, and one in
        /// 1,250 on a thread of its own.
        static func kind(of index: Int) -> ExecutorKind {
            if index % 1_250 == 1 { return .dedicatedThread }
            switch index % 4 {
            case 2: return .privatePool
            case 3: return .serialQueue
            default: return .sharedPool
            }
        }

        @Test("idle loops woken from random threads reduce every event, none later than a second")
        func idleLoopsWokenAgainAndAgainReduceEveryEventInTime() async throws {
            let baseline = await LiveBaseline.settle()
            let loops = StressScale.idleLoops
            let producers = 4
            let waves = max(6, StressScale.rounds * 2)
            let perWave = max(16, loops / 16)  // per producer
            let executors = try Dictionary(uniqueKeysWithValues: ExecutorKind.allCases.map {
                ($0, try StressExecutors($0, name: "idle-wake", queues: 8))
            })
            let reducedBy = (0..<producers).map { _ in Counter() }
            let reducer = Reducer<WakeState, WakeEvent> { state, event in
                let now = DispatchTime.now().uptimeNanoseconds
                var state = state
                state.reduced += 1
                if now > event.emittedAt { state.longestWait = max(state.longestWait, now - event.emittedAt) }
                reducedBy[event.producer].add()
                return state
            }
            do {
                let running = try (0..<loops).map { index in
                    try Spin(initialState: WakeState(), feedbacks: [], reducer: reducer)
                        .start(options: SpinOptions(executor: executors[Self.kind(of: index)]!.executor(for: index)))
                }
                try await wakeAgainAndAgain(running, producers: producers, waves: waves, perWave: perWave, reducedBy: reducedBy)
            }
            // Every loop released (the even ones stopped first).
            for executors in executors.values { try await executors.finish() }
            await baseline.expectReturned()
        }

        private func wakeAgainAndAgain(
            _ running: [SpinLoop<WakeState, WakeEvent>], producers: Int, waves: Int, perWave: Int, reducedBy: [Counter]
        ) async throws {
            let loops = running.count
            let chunk = 256
            let acceptedPerLoop = Locked<[[Int]]>([])
            let slowDrains = Counter()
            let refused = Counter()

            let finished = await onThreads(producers, within: 900) { producer in
                var accepted = Array(repeating: 0, count: loops)
                var acceptedTotal = 0
                var random = SplitMix64(seed: 0x5EED &+ UInt64(producer))
                // Waits until this producer's events are all reduced (its
                // loops then go idle again), a minute at most.
                func drain() {
                    let deadline = DispatchTime.now().uptimeNanoseconds + 60_000_000_000
                    while reducedBy[producer].current < acceptedTotal {
                        if DispatchTime.now().uptimeNanoseconds > deadline {
                            slowDrains.add()
                            return
                        }
                        usleep(50)
                    }
                }
                func emit(to index: Int) {
                    let event = WakeEvent(producer: producer, emittedAt: DispatchTime.now().uptimeNanoseconds)
                    guard running[index].emit(event) == .accepted else {
                        refused.add()
                        return
                    }
                    accepted[index] += 1
                    acceptedTotal += 1
                    if acceptedTotal % chunk == 0 { drain() }
                }
                // Wave 0 wakes every loop once (each producer a quarter);
                // then random loops, with pauses in which they go idle.
                for index in stride(from: producer, to: loops, by: producers) { emit(to: index) }
                drain()
                for _ in 0..<waves {
                    for _ in 0..<perWave { emit(to: Int.random(in: 0..<loops, using: &random)) }
                    drain()
                    usleep(UInt32.random(in: 0...500, using: &random))  // let threads park
                }
                acceptedPerLoop.withLock { $0.append(accepted) }
            }
            #expect(finished, "producers did not finish: a hang")
            #expect(refused.current == 0, "an emit on a running loop was refused")
            #expect(slowDrains.current == 0, "a producer's events took over a minute to be reduced")

            let perProducer = acceptedPerLoop.withLock { $0 }
            try #require(perProducer.count == producers)
            let accepted = (0..<loops).map { index in perProducer.reduce(0) { $0 + $1[index] } }
            let acceptedTotal = accepted.reduce(0, +)
            let allReduced = await eventually {
                reducedBy.reduce(0) { $0 + $1.current } == acceptedTotal
            }
            #expect(allReduced, "accepted \(acceptedTotal), reduced \(reducedBy.reduce(0) { $0 + $1.current })")

            // The even loops are stopped here, the odd ones only released.
            let reports = Locked<[Int: StopReport]>([:])
            await withTaskGroup(of: Void.self) { group in
                for index in stride(from: 0, to: loops, by: 2) {
                    let loop = running[index]
                    group.addTask {
                        let report = await loop.stop()
                        reports.withLock { $0[index] = report }
                    }
                }
            }
            var longestWait: UInt64 = 0
            var booksWrong = 0
            for index in 0..<loops {
                let state = running[index].state
                longestWait = max(longestWait, state.longestWait)
                if state.reduced != accepted[index] { booksWrong += 1 }
                if let report = reports.withLock({ $0[index] }), report != StopReport(reduced: accepted[index], discarded: 0) {
                    booksWrong += 1
                }
            }
            #expect(booksWrong == 0, "\(booksWrong) loops reduced other than what they accepted")
            let longestMilliseconds = Double(longestWait) / 1e6
            #expect(longestWait <= 1_000_000_000, "an event waited \(longestMilliseconds) ms to be reduced: a lost wake-up")
            reportTotal("idle-wake-events", queue: "lockFree", acceptedTotal)
            stressLine("SPINDLE-STRESS idle-wake queue=all \(loops) loops, \(waves) waves of \(producers) x \(perWave), longest wait \(String(format: "%.1f", longestMilliseconds)) ms")
        }
    }
}
