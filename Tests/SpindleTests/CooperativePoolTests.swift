import Foundation
@_spi(Testing) import Spindle
import Testing
import SpindleTestSupport

// No Spindle path blocks a cooperative thread: effects whose emits meet a
// full `.block` ring suspend, so with more such effects than the
// cooperative pool has threads, other tasks still run.
@Suite("The cooperative pool is never blocked by the engine")
struct CooperativePoolTests {
    @Test(arguments: ExecutorKind.blockable)
    func effectEmitsIntoAFullBlockRingSuspendAndOtherTasksStillRun(executor: ExecutorKind) async throws {
        // More emitting effects than any cooperative pool has threads.
        let emitters = 4 * max(2, ProcessInfo.processInfo.activeProcessorCount)
        let eventsEach = 10
        let latch = Latch()
        let firstReduction = Counter()
        let attempts = Counter()
        let feedbacks = (0..<emitters).map { _ in
            // Started once with the initial state; each element is asked
            // for after a suspension, on the cooperative pool, and the next
            // one only once the engine took the previous one.
            Feedback<Int, Int>(effect: { () -> CountedOnes in
                CountedOnes(count: eventsEach, attempts: attempts)
            })
        }
        try await executor.withExecutor { spinExecutor in
            let spin = Spin<Int, Int>(
                initialState: 0, feedbacks: feedbacks,
                reducer: Reducer { state, event in
                    // The first reduction holds the runner: the one-slot
                    // ring fills and every later emit meets it full.
                    if firstReduction.add() == 1 { latch.block() }
                    return state + event
                })
            let loop = try spin.start(options: SpinOptions(
                executor: spinExecutor, queue: .bounded(capacity: 1, overflow: .block)))
            // Every emitter has come to emit while the runner is held:
            // emitters blocked on the full ring would hold every cooperative
            // thread, and the others would never get one.
            #expect(await eventually { latch.isBlocked && attempts.current >= emitters })
            // A task of the test's own still runs beside them.
            let probe = await Task.detached { 42 }.value
            #expect(probe == 42)
            latch.release()
            #expect(await eventually { loop.state == emitters * eventsEach })
            await loop.stop()
            #expect(loop.state == emitters * eventsEach)
        }
    }
}

/// `count` ones, each handed out after a suspension and counted in
/// `attempts` as it is asked for.
struct CountedOnes: AsyncSequence, Sendable {
    let count: Int
    let attempts: Counter

    struct AsyncIterator: AsyncIteratorProtocol {
        var left: Int
        let attempts: Counter
        mutating func next() async -> Int? {
            await Task.yield()
            guard left > 0 else { return nil }
            left -= 1
            attempts.add()
            return 1
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(left: count, attempts: attempts) }
}
