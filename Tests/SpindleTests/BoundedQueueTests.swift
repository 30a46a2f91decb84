import Spindle
import Testing
import SpindleTestSupport

@Suite struct BoundedQueueTests {
    /// A counter reducer that blocks on its first event until released.
    func blockedSpin(_ latch: Latch) -> Spin<Int, CounterEvent> {
        Spin(initialState: 0, feedbacks: [], reducer: Reducer { state, _ in
            if state == 0 { latch.block() }
            return state + 1
        })
    }

    // The tests with a blocked reducer run on every executor but the shared
    // pool, which every test shares.

    @Test(arguments: ExecutorKind.blockable)
    func dropNewestRefusesExactlyWhatDoesNotFit(executor: ExecutorKind) async throws {
        try await executor.withExecutor { executor in
            let latch = Latch()
            let loop = try blockedSpin(latch).start(options: SpinOptions(
                executor: executor, queue: .bounded(capacity: 8, overflow: .dropNewest)))
            loop.emit(.increment)
            #expect(await eventually { latch.isBlocked })
            var results: [EmitResult] = []
            for _ in 0..<100 { results.append(loop.emit(.increment)) }
            #expect(results.filter { $0 == .accepted }.count == 8)
            #expect(results.filter { $0 == .dropped }.count == 92)
            #expect(loop.statistics.droppedEvents == 92)
            latch.release()
            let report = await loop.stop()
            #expect(report.reduced == 9)
            #expect(loop.state == 9)
        }
    }

    @Test(arguments: ExecutorKind.blockable)
    func blockWaitsForSpaceAndLosesNothing(executor: ExecutorKind) async throws {
        try await executor.withExecutor { executor in
            let latch = Latch()
            let loop = try blockedSpin(latch).start(options: SpinOptions(
                executor: executor, queue: .bounded(capacity: 8, overflow: .block)))
            loop.emit(.increment)
            #expect(await eventually { latch.isBlocked })
            let results = Recorder<EmitResult>()
            let producerThread = Locked<Int?>(nil)
            async let producer: Void = onThread {
                producerThread.withLock { $0 = currentKernelThreadID() }
                for _ in 0..<100 { results.append(loop.emit(.increment)) }
            }
            #expect(await eventually { results.count == 8 })
            // The 9th emit waits for space while the reducer is blocked: the
            // producer goes to sleep in it, with no 9th answer. (Had it not
            // waited, its thread would have answered and run on through
            // all 100 emits without sleeping.)
            if kernelThreadFactsAvailable {
                let thread = try #require(await eventuallyValue { producerThread.withLock { $0 } })
                #expect(await eventually { kernelThreadIsAsleep(thread) && results.count == 8 },
                        "the producer is not waiting in its 9th emit: \(results.count) answers")
            }
            #expect(results.count == 8)
            latch.release()
            await producer
            let report = await loop.stop()
            #expect(results.values.allSatisfy { $0 == .accepted })
            #expect(report.reduced == 101)
        }
    }

    @Test(arguments: ExecutorKind.blockable)
    func aProducerBlockedOnAFullRingGetsStoppedWhenTheLoopStops(executor: ExecutorKind) async throws {
        try await executor.withExecutor { executor in
            let latch = Latch()
            let loop = try blockedSpin(latch).start(options: SpinOptions(
                executor: executor, queue: .bounded(capacity: 4, overflow: .block)))
            loop.emit(.increment)
            #expect(await eventually { latch.isBlocked })
            for _ in 0..<4 { #expect(loop.emit(.increment) == .accepted) }
            let producerThread = Locked<Int?>(nil)
            async let blocked = onThread {
                producerThread.withLock { $0 = currentKernelThreadID() }
                return loop.emit(.increment)
            }
            // The stop comes while the producer sleeps in its emit, waiting
            // for space.
            if kernelThreadFactsAvailable {
                let thread = try #require(await eventuallyValue { producerThread.withLock { $0 } })
                #expect(await eventually { kernelThreadIsAsleep(thread) }, "the producer never waited for space")
            }
            async let stopping = loop.stop()
            #expect(await blocked == .stopped)
            latch.release()
            let report = await stopping
            #expect(report.reduced == 5)
        }
    }

    @Test(arguments: allExecutors)
    func aFeedbackEmittingFromTheReducerThreadNeverDeadlocksOnAFullRing(executor: ExecutorKind) async throws {
        try await executor.withExecutor { executor in
            // The inline feedback emits one event per state while producers
            // keep the 4-slot ring full: its emits go to the loop's local queue.
            let loop = try Spin(initialState: 0) {
                Feedback<Int, CounterEvent>(effect: { state in
                    state < 20_000 ? .increment : nil
                }).executeOnReducerThread()
                Reducer(counterReducer.reduce)
            }.start(options: SpinOptions(executor: executor, queue: .bounded(capacity: 4, overflow: .block)))
            let accepted = Recorder<Int>()
            await onThreads(2) { _ in
                var count = 0
                for _ in 0..<5_000 where loop.emit(.increment) == .accepted { count += 1 }
                accepted.append(count)
            }
            #expect(accepted.values.reduce(0, +) == 10_000)
            #expect(await eventually { loop.state >= 20_000 })
            let report = await loop.stop()
            #expect(report.reduced == loop.state)
        }
    }
}
