import Dispatch
import Foundation
@_spi(Testing) @_spi(Benchmarks) @_spi(Tuning) import Spindle
import Synchronization
import Testing
import SpindleTestSupport

/// Catches two runners in one loop: the loop's reducer and its queue-less
/// feedback enter and leave it; entering while another is inside is counted.
final class RunnerGuard: Sendable {
    private let inside = Atomic<Bool>(false)
    /// Entries made while another runner was inside: 0 unless the loop ran
    /// on two threads at once.
    let overlaps = Counter()
    /// The threads that ran the loop (pthread ids).
    private let threads = Locked<Set<UInt>>([])

    func enter() {
        if inside.exchange(true, ordering: .acquiringAndReleasing) { overlaps.add() }
        #if canImport(Darwin)
        let thread = UInt(bitPattern: pthread_self())
        #else
        let thread = UInt(pthread_self())
        #endif
        threads.withLock { _ = $0.insert(thread) }
    }

    func leave() {
        inside.store(false, ordering: .releasing)
    }

    var threadCount: Int { threads.withLock { $0.count } }
}

/// A producer's item, or an echo the loop's inline feedback emits for every
/// item whose sequence is a multiple of 7.
enum GuardedEvent: Sendable {
    case item(Stamped)
    case echo
}

struct GuardedState: Sendable {
    var items = 0
    var echoes = 0
    var lastItem: Stamped?
}

/// Stops every loop of `guardedSpin`s, then checks each one
/// (`expectGuarded`) against the items its producers say it accepted
/// (`accepted`: by producer, then loop). Returns the items accepted in all.
func stopAndExpectGuarded(
    _ running: [SpinLoop<GuardedState, GuardedEvent>], _ guards: [RunnerGuard], _ checkers: [OrderChecker],
    accepted byProducer: [Int: [Int]], producers: Int, _ context: String
) async throws -> Int {
    let perProducer = (0..<producers).compactMap { byProducer[$0] }
    try #require(perProducer.count == producers, "\(context): a producer did not report")
    var reports: [StopReport] = []
    for loop in running { reports.append(await loop.stop()) }
    var accepted = 0
    for index in running.indices {
        let items = perProducer.map { $0[index] }
        accepted += items.reduce(0, +)
        expectGuarded(running[index], guards[index], checkers[index], items: items, report: reports[index],
                      "loop \(index) (\(context))")
    }
    return accepted
}

/// The checks of a stopped loop of `guardedSpin`: never two runners,
/// every accepted item (`items`, per producer) reduced once and in producer
/// order, every echo reduced or refused after the stop, nothing discarded.
func expectGuarded(
    _ loop: SpinLoop<GuardedState, GuardedEvent>, _ guarded: RunnerGuard, _ checker: OrderChecker,
    items: [Int], report: StopReport, _ context: String
) {
    #expect(guarded.overlaps.current == 0, "\(context) ran on two threads at once")
    #expect(checker.reducedPerProducer == items, "\(context): an accepted item was not reduced once")
    #expect(checker.outOfOrder == 0 && checker.gaps == 0, "\(context): out of producer order")
    // Each item with a sequence multiple of 7 made one echo, emitted in the
    // slice (never dropped): reduced, or refused once the stop had closed
    // the loop.
    let echoesMade = checker.reducedPerProducer.reduce(0) { $0 + ($1 + 6) / 7 }
    #expect(loop.state.echoes + loop.statistics.rejectedAfterStop == echoesMade, "\(context): an echo was lost")
    #expect(report == StopReport(reduced: loop.state.items + loop.state.echoes, discarded: 0), "\(context)")
}

/// The spin of the one-runner tests: its reducer and its queue-less
/// feedback enter `guarded` (two runners at once show there); the reducer
/// checks each item's producer order with `checker`, after `onReduce`; the
/// feedback echoes every item whose sequence is a multiple of 7.
func guardedSpin(
    _ guarded: RunnerGuard, _ checker: OrderChecker, onReduce: @escaping @Sendable () -> Void = {}
) -> Spin<GuardedState, GuardedEvent> {
    Spin(initialState: GuardedState()) {
        Feedback<GuardedState, GuardedEvent>(effect: { state in
            guarded.enter()
            defer { guarded.leave() }
            guard let item = state.lastItem, item.sequence % 7 == 0 else { return nil }
            return .echo
        })
        Reducer<GuardedState, GuardedEvent> { state, event in
            guarded.enter()
            defer { guarded.leave() }
            onReduce()
            var state = state
            state.lastItem = nil
            switch event {
            case .item(let item):
                checker.observe(item)
                state.items += 1
                state.lastItem = item
            case .echo:
                state.echoes += 1
            }
            return state
        }
    }
}

extension StressSuite {
    /// The scheduling protocol's promise: a loop is never run by two threads
    /// at once, on any executor, however its producers and its own feedback
    /// wake it. Small batches make every loop give its thread back often, so
    /// on a pool it moves between threads.
    @Suite("One runner at a time")
    struct RunnerExclusionStressTests {
        @Test("a loop never runs on two threads at once, under producers and its own feedback's emits",
              arguments: ExecutorKind.allCases)
        func aLoopNeverRunsOnTwoThreadsAtOnce(executor kind: ExecutorKind) async throws {
            let baseline = await LiveBaseline.settle()
            do {
                let executors = try StressExecutors(kind, name: "one-runner")
                let loops = kind == .dedicatedThread ? 8 : 64
                let producers = 4
                let itemsPerProducer = max(2_000, StressScale.eventsPerQueue / 1_000)
                let guards = (0..<loops).map { _ in RunnerGuard() }
                let checkers = (0..<loops).map { _ in OrderChecker(producers: producers) }
                let running = try (0..<loops).map { index in
                    try guardedSpin(guards[index], checkers[index]).start(options: SpinOptions(
                        executor: executors.executor(for: index),
                        queue: index % 2 == 0 ? .lockFree : .bounded(capacity: 32, overflow: .block),
                        maxBatch: 8))
                }
                let acceptedPerLoop = Locked<[Int: [Int]]>([:])  // by producer, then loop
                let finished = await onThreads(producers) { producer in
                    var random = SplitMix64(seed: 0xC0FFEE &+ UInt64(producer))
                    var sequence = Array(repeating: 0, count: loops)
                    for _ in 0..<itemsPerProducer {
                        let index = Int.random(in: 0..<loops, using: &random)
                        let item = Stamped(producer: producer, sequence: sequence[index])
                        if running[index].emit(.item(item)) == .accepted { sequence[index] += 1 }
                    }
                    acceptedPerLoop.withLock { $0[producer] = sequence }
                }
                #expect(finished, "producers did not finish: a hang")
                let accepted = try await stopAndExpectGuarded(
                    running, guards, checkers, accepted: acceptedPerLoop.withLock { $0 }, producers: producers, "\(kind)")
                let mostThreads = guards.map(\.threadCount).max() ?? 0
                if kind == .dedicatedThread { #expect(mostThreads == 1) }
                reportTotal("one-runner-events-\(kind.rawValue)", queue: "mixed", accepted)
                stressLine("SPINDLE-STRESS one-runner executor=\(kind.rawValue) \(loops) loops, \(accepted) items, most threads one loop ran on \(mostThreads)")
                try await executors.finish()
            }
            await baseline.expectReturned()
        }
    }
}
