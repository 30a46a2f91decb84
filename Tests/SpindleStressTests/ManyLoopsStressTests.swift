import Dispatch
import Foundation
@_spi(Testing) @_spi(Benchmarks) @_spi(Tuning) import Spindle
import SpindleQueueFixture
import Testing
import SpindleTestSupport

/// What becomes of one loop of the many-loops test.
enum LoopFate: Int, CaseIterable, Sendable {
    case drainedMidStream, discardedMidStream, releasedMidStream, drainedAtEnd, releasedAtEnd

    var isMidStream: Bool { self == .drainedMidStream || self == .discardedMidStream || self == .releasedMidStream }
    var isReleased: Bool { self == .releasedMidStream || self == .releasedAtEnd }
    var stopMode: StopMode? {
        switch self {
        case .drainedMidStream, .drainedAtEnd: .drain
        case .discardedMidStream: .discardPending
        case .releasedMidStream, .releasedAtEnd: nil
        }
    }
}

/// What one producer thread did to each loop.
struct ManyLoopsTally: Sendable {
    var accepted: [Int]
    var stopped: [Int]
    /// Emits answered `.accepted` after the loop had answered `.stopped`.
    var acceptedAfterStopped = 0
    /// Emits answered `.dropped`: never, on these queues.
    var dropped = 0

    init(loops: Int) {
        accepted = Array(repeating: 0, count: loops)
        stopped = Array(repeating: 0, count: loops)
    }
}

extension StressSuite {
    /// Many loops on every executor at once (mostly the shared pool, some on
    /// a private pool, serial queues and dedicated threads), fed by four
    /// producer threads, while the test stops them (draining or discarding)
    /// and releases them mid-stream and at the end. Per loop: conservation
    /// and per-producer order; overall: live objects back to the baseline.
    @Suite("Many loops")
    struct ManyLoopsStressTests {
        static let queues: [QueueKind] = [.lockFree, .bounded(capacity: 16, overflow: .block), .locked]

        /// The executor kind of loop `index`: 40 % shared pool, 30 % private
        /// pool, 20 % serial queues, and one loop in fifty on a thread of its own.
        static func kind(of index: Int) -> ExecutorKind {
            switch index % 10 {
            case 4, 5, 6: .privatePool
            case 7, 8: .serialQueue
            case 9: (index / 10) % 5 == 0 ? .dedicatedThread : .sharedPool
            default: .sharedPool
            }
        }

        @Test("1,000 loops, 4 producers, stops and releases mid-stream: every loop's books balance, in producer order")
        func manyLoopsStartedStoppedAndReleasedUnderProducersKeepTheirBooks() async throws {
            let baseline = await LiveBaseline.settle()
            let loops = StressScale.manyLoops
            let producers = 4
            let perLoop = max(20, StressScale.eventsPerQueue / 100_000)  // per producer
            let executors = try Dictionary(uniqueKeysWithValues: ExecutorKind.allCases.map {
                ($0, try StressExecutors($0, name: "many-loops"))
            })
            let fates = (0..<loops).map { LoopFate.allCases[$0 % LoopFate.allCases.count] }
            let checkers = (0..<loops).map { _ in OrderChecker(producers: producers) }
            var strong: [SpinLoop<Int, Stamped>?] = try (0..<loops).map { index in
                let checker = checkers[index]
                return try Spin(initialState: 0) {
                    Feedback<Int, Stamped>(effect: { _ in nil })  // on the loop's executor
                    checker.reducer
                }.start(options: SpinOptions(
                    executor: executors[Self.kind(of: index)]!.executor(for: index),
                    queue: Self.queues[index % Self.queues.count],
                    maxBatch: 64))
            }
            #expect(strong.allSatisfy { $0?.startError == nil })
            let weak = strong.map { loop in
                let holder = WeakLoop<Int, Stamped>()
                holder.set(loop)
                return holder
            }
            // Rounds the producers have made over all the loops.
            let rounds = Counter()
            let tallies = Locked<[Int: ManyLoopsTally]>([:])

            async let producing: Bool = onThreads(producers, within: 600) { producer in
                var tally = ManyLoopsTally(loops: loops)
                var sequence = Array(repeating: 0, count: loops)
                var done = Array(repeating: false, count: loops)
                var random = SplitMix64(seed: UInt64(producer) &+ 1)
                var order = Array(0..<loops)
                for _ in 0..<perLoop {
                    order.shuffle(using: &random)
                    for index in order where !done[index] {
                        guard let loop = weak[index].loop else {
                            done[index] = true  // released
                            continue
                        }
                        switch loop.emit(Stamped(producer: producer, sequence: sequence[index])) {
                        case .accepted:
                            tally.accepted[index] += 1
                            sequence[index] += 1
                        case .stopped:
                            tally.stopped[index] += 1
                            done[index] = true
                            // Once stopped, always stopped.
                            if loop.emit(Stamped(producer: producer, sequence: sequence[index])) != .stopped {
                                tally.acceptedAfterStopped += 1
                            }
                        case .dropped:
                            tally.dropped += 1
                        }
                    }
                    rounds.add()
                }
                tallies.withLock { $0[producer] = tally }
            }

            // Mid-stream: four batches of loops, stopped or released once the
            // producers are a fifth, two fifths... of their way through.
            let allRounds = producers * perLoop
            for batch in 0..<4 {
                _ = await eventually(within: 120) { rounds.current >= allRounds * (batch + 1) / 5 }
                var stopping: [(Int, SpinLoop<Int, Stamped>, StopMode)] = []
                for index in 0..<loops where fates[index].isMidStream && (index / LoopFate.allCases.count) % 4 == batch {
                    if let mode = fates[index].stopMode, let loop = strong[index] {
                        stopping.append((index, loop, mode))
                    } else {
                        strong[index] = nil  // released without stop, producers still emitting
                    }
                }
                await withTaskGroup(of: Void.self) { group in
                    for (_, loop, mode) in stopping { group.addTask { _ = await loop.stop(mode) } }
                }
            }
            let finished = await producing
            #expect(finished, "producers did not finish: a hang")
            // At the end: the rest are stopped with drain or released.
            await withTaskGroup(of: Void.self) { group in
                for index in 0..<loops where fates[index] == .drainedAtEnd {
                    if let loop = strong[index] { group.addTask { _ = await loop.stop(.drain) } }
                }
            }
            for index in 0..<loops where fates[index] == .releasedAtEnd { strong[index] = nil }

            let all = tallies.withLock { $0 }
            #expect(all.count == producers)
            let tally = (0..<producers).compactMap { all[$0] }
            #expect(tally.allSatisfy { $0.acceptedAfterStopped == 0 }, "an emit was accepted after .stopped")
            #expect(tally.allSatisfy { $0.dropped == 0 }, "a .block or unbounded queue dropped an event")
            var acceptedByQueue: [String: Int] = [:]
            for index in 0..<loops {
                let accepted = tally.map { $0.accepted[index] }
                let acceptedTotal = accepted.reduce(0, +)
                let checker = checkers[index]
                let fate = fates[index]
                acceptedByQueue[name(of: Self.queues[index % Self.queues.count]), default: 0] += acceptedTotal
                if fate.isReleased {
                    // Released while referenced by no one else: never refused,
                    // and everything accepted is reduced in the background.
                    #expect(tally.allSatisfy { $0.stopped[index] == 0 }, "loop \(index) (\(fate)): an emit was refused")
                    let drained = await eventually { checker.progress.current == acceptedTotal }
                    #expect(drained, "loop \(index) (\(fate)): accepted \(acceptedTotal), reduced \(checker.progress.current)")
                    if drained { #expect(checker.reducedPerProducer == accepted, "loop \(index) (\(fate))") }
                } else if let loop = strong[index] {
                    let report = await loop.stop()  // the same report as the stop that ended it
                    #expect(loop.isStopped)
                    #expect(report.reduced + report.discarded == acceptedTotal,
                            "loop \(index) (\(fate)): \(report), accepted \(acceptedTotal)")
                    #expect(report.reduced == checker.reduced, "loop \(index) (\(fate))")
                    #expect(loop.statistics.discardedAtStop == report.discarded)
                    if fate.stopMode == .drain {
                        #expect(report.discarded == 0, "loop \(index) (\(fate))")
                        #expect(checker.reducedPerProducer == accepted, "loop \(index) (\(fate))")
                    } else {
                        #expect(zip(checker.reducedPerProducer, accepted).allSatisfy { $0 <= $1 }, "loop \(index) (\(fate))")
                    }
                    #expect(loop.emit(Stamped(producer: 0, sequence: 0)) == .stopped)
                }
                #expect(checker.outOfOrder == 0, "loop \(index) (\(fate)): out of order")
                #expect(checker.gaps == 0, "loop \(index) (\(fate)): a gap")
            }
            for (queue, accepted) in acceptedByQueue.sorted(by: { $0.key < $1.key }) {
                reportTotal("many-loops-events", queue: queue, accepted)
            }
            stressLine("SPINDLE-STRESS many-loops queue=all \(loops) loops, \(producers) producers, fates \(LoopFate.allCases.map { fate in fates.filter { $0 == fate }.count })")
            strong.removeAll()
            for executors in executors.values { try await executors.finish() }
            await baseline.expectReturned()
        }
    }
}
