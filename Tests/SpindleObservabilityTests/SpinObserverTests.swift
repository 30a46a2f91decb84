import Dispatch
import Foundation
@_spi(Testing) @_spi(Benchmarks) @_spi(Tuning) import Spindle
import Testing
import SpindleTestSupport
import SpindleQueueFixture

@Suite("SpinObserver: the loop observer hook")
struct SpinObserverTests {
    static let queues: [QueueKind] = [.lockFree, .bounded(capacity: 64, overflow: .block), .locked]

    @Test("every reduction, in order, with its new state; started first, stopped last",
          arguments: [ExecutorKind.sharedPool, .dedicatedThread], queues)
    func reductionsInOrder(executor: ExecutorKind, queue: QueueKind) async throws {
        let observer = ListeningObserver<Int, Int>()
        let spin = Spin<Int, Int>(initialState: 0) { Reducer { state, event in state &* 31 &+ event } }
        let loop = try spin.observed(by: observer)
            .start(options: SpinOptions(executor: executor == .dedicatedThread ? .dedicatedThread : .sharedPool, queue: queue))
        for event in 1...2_000 { loop.emit(event) }
        let report = await loop.stop()

        let heard = observer.heard
        #expect(heard.first == .started(0))
        #expect(heard.last == .stopped(StopReport(reduced: 2_000, discarded: 0)))
        #expect(report.reduced == 2_000)
        var expected = 0
        var reductions: [Int] = []
        for case let .reduced(event, state, reduction) in heard {
            expected = expected &* 31 &+ event
            #expect(state == expected, "reduction \(reduction)")
            reductions.append(reduction)
        }
        #expect(reductions == Array(1...2_000))
        #expect(expected == loop.state)
        // One producer: accepted in the order emitted.
        #expect(observer.accepted == Array(1...2_000))
        // Batches account for every reduction, and each follows its events.
        let batches = heard.compactMap { item -> (Int, Int)? in
            if case .batch(let events, let total) = item { (events, total) } else { nil }
        }
        #expect(batches.map(\.0).reduce(0, +) == 2_000)
        #expect(batches.last?.1 == 2_000)
        // One thread at a time: the same one on a dedicated thread; on the
        // pool, whichever of its threads runs the slice.
        #expect(observer.overlappingReducerCalls == 0)
        if executor == .dedicatedThread { #expect(observer.reducerThreadCount == 1) }
    }

    @Test("a loop that cannot start: failed to start with its error, then stopped with nothing reduced")
    func aLoopThatCannotStartIsReported() async throws {
        let observer = ListeningObserver<Int, Int>()
        let spin = Spin<Int, Int>(initialState: 0) { Reducer { state, event in state + event } }
        var options = SpinOptions()
        options.maxBatch = 0
        let expected = SpinExecutorError.invalidOptions(reason: "maxBatch must be at least 1 (got 0)")
        #expect(throws: expected) { try spin.observed(by: observer).start(options: options) }
        #expect(observer.heard == [.failedToStart(expected), .stopped(StopReport(reduced: 0, discarded: 0))])
    }

    @Test("observesEachEvent false: batches only, no per-event calls")
    func batchOnlyObserver() async throws {
        let observer = ListeningObserver<Int, Int>(eachEvent: false)
        let spin = Spin<Int, Int>(initialState: 0) { Reducer { state, event in state + event } }
        let loop = try spin.observed(by: observer).start()
        for _ in 0..<500 { loop.emit(1) }
        await loop.stop()
        let heard = observer.heard
        #expect(!heard.contains { if case .reduced = $0 { true } else { false } })
        #expect(observer.accepted.isEmpty)
        let total = heard.reduce(0) { sum, item in
            if case .batch(let events, _) = item { sum + events } else { sum }
        }
        #expect(total == 500)
    }

    @Test("queue depth counts accepted events the reducer has not reached")
    func queueDepth() async throws {
        let gate = DispatchSemaphore(value: 0)
        let depths = Lock<[Int]>([])
        struct DepthObserver: SpinObserver {
            typealias State = Int
            typealias Event = Int
            let depths: Lock<[Int]>
            var observesEachEvent: Bool { false }
            func batchReduced(_ batch: ReductionBatch) { depths.withLock { $0.append(batch.queueDepth) } }
        }
        // The first event blocks the reducer until 99 more are queued (on a
        // thread of its own: never block the shared pool every test uses).
        let spin = Spin<Int, Int>(initialState: 0) {
            Reducer { state, event in
                if event == 0 { gate.wait() }
                return state + 1
            }
        }
        let loop = try spin.observed(by: DepthObserver(depths: depths))
            .start(options: SpinOptions(executor: .dedicatedThread, maxBatch: 1))
        loop.emit(0)
        for event in 1..<100 { loop.emit(event) }
        gate.signal()
        await loop.stop()
        let seen = depths.withLock { $0 }
        #expect(seen.first == 99)
        #expect(seen.last == 0)
        #expect(seen.count == 100)
    }

    @Test("several observers all hear everything, in installation order")
    func severalObservers() async throws {
        let first = ListeningObserver<Int, Int>()
        let second = ListeningObserver<Int, Int>()
        let spin = Spin<Int, Int>(initialState: 0) { Reducer { state, event in state + event } }
        let loop = try spin.observed(by: first).observed(by: second).start()
        for _ in 0..<100 { loop.emit(1) }
        await loop.stop()
        #expect(first.heard.count > 100)
        #expect(first.heard == second.heard)
    }

    @Test("a spin started twice reports both loops to the same observer")
    func observedSpinStartedTwice() async throws {
        let observer = ListeningObserver<Int, Int>()
        let spin = Spin<Int, Int>(initialState: 0) { Reducer { state, event in state + event } }.observed(by: observer)
        for _ in 0..<2 {
            let loop = try spin.start()
            loop.emit(1)
            await loop.stop()
        }
        #expect(observer.heard.filter { $0 == .started(0) }.count == 2)
        #expect(observer.heard.filter { $0 == .stopped(StopReport(reduced: 1, discarded: 0)) }.count == 2)
    }

    @Test("refusals: dropped by a full ring, rejected after stop, discarded at stop")
    func refusals() async throws {
        let observer = ListeningObserver<Int, Int>()
        let gate = DispatchSemaphore(value: 0)
        let holding = OpenOnce()
        let spin = Spin<Int, Int>(initialState: 0) {
            Reducer { state, event in
                if event == 0 {
                    holding.open()
                    gate.wait()
                }
                return state + 1
            }
        }
        // The reducer blocks: on a thread of its own, not the shared pool.
        let loop = try spin.observed(by: observer)
            .start(options: SpinOptions(
                executor: .dedicatedThread, queue: .bounded(capacity: 2, overflow: .dropNewest), maxBatch: 1))
        loop.emit(0)  // the reducer takes it and blocks
        await holding.wait()  // the ring is empty again
        #expect(await eventually { loop.statistics.reducedEvents == 0 && observer.heard.count == 1 })
        var accepted: [Int] = []
        var dropped: [Int] = []
        for event in 1...10 {
            if loop.emit(event) == .accepted { accepted.append(event) } else { dropped.append(event) }
        }
        #expect(!dropped.isEmpty)
        // The stop is requested while the reducer still holds event 0, and
        // only then is the reducer let go: every accepted event is pending
        // at the stop, whatever the scheduling.
        loop.requestStop(.discardPending)
        gate.signal()
        let report = await loop.stop(.discardPending)
        #expect(report == StopReport(reduced: 1, discarded: accepted.count))
        #expect(loop.emit(99) == .stopped)

        let heard = observer.heard
        #expect(heard.filter { if case .dropped = $0 { true } else { false } } == dropped.map { .dropped($0) })
        #expect(heard.contains(.rejected(99)))
        let discarded = heard.compactMap { item -> Int? in
            if case .discardedAtStop(let event) = item { event } else { nil }
        }
        #expect(discarded.count == report.discarded)
        #expect(report.reduced + report.discarded == 1 + accepted.count)
    }
}
