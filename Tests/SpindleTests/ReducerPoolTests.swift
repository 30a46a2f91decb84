import Dispatch
@_spi(Testing) @_spi(Benchmarks) @_spi(Tuning) @testable import Spindle
import Testing
import SpindleTestSupport

// Pools and dedicated threads: what starting, stopping, releasing and
// shutting down do, and the errors that replace crashes.

@Suite struct ReducerPoolTests {
    // MARK: Errors instead of crashes

    @Test(arguments: [0, -1])
    func aPoolNeedsAtLeastOneThread(threads: Int) {
        #expect(throws: SpinExecutorError.invalidThreadCount(threads)) {
            try ReducerPool(threads: threads)
        }
    }

    @Test func theSharedPoolCannotBeShutDown() async {
        await #expect(throws: SpinExecutorError.sharedPoolCannotShutDown) {
            try await ReducerPool.shared.shutdown()
        }
        #expect(!ReducerPool.shared.isShutDown)
        #expect(ReducerPool.shared.threadCount == ReducerPool.defaultThreadCount)
    }

    @Test func startingOnAShutDownPoolFailsWithoutCrashing() async throws {
        let pool = try ReducerPool(threads: 1, name: "closed-pool")
        #expect(pool.threadCount == 1)
        try await pool.shutdown()
        #expect(pool.isShutDown)
        let spin = Spin(initialState: 7, feedbacks: [], reducer: counterReducer)

        #expect(throws: SpinExecutorError.poolShutDown(pool: "closed-pool")) {
            try spin.start(options: SpinOptions(executor: .pool(pool)))
        }

        // A bridge's loop (it cannot throw) is stopped from birth.
        let loop = SpinLoop(spin: spin, options: SpinOptions(executor: .pool(pool)))
        #expect(loop.startError == .poolShutDown(pool: "closed-pool"))
        #expect(loop.isStopped)
        #expect(loop.emit(.increment) == .stopped)
        #expect(await loop.stop() == StopReport(reduced: 0, discarded: 0))
        #expect(loop.state == 7)
        var states: [Int] = []
        for await state in loop.states() { states.append(state) }
        #expect(states == [7])
        #expect(pool.liveLoops == 0)
    }

    @Test func aLoopThatStartedHasNoStartError() async throws {
        let loop = try Spin(initialState: 0, feedbacks: [], reducer: counterReducer)
            .start(options: SpinOptions(executor: .dedicatedThread))
        #expect(loop.startError == nil)
        let tried = try Spin(initialState: 0, feedbacks: [], reducer: counterReducer).start()
        #expect(tried.startError == nil)
        await loop.stop()
        await tried.stop()
    }

    // MARK: Shutting a pool down

    @Test func shuttingDownAPoolStopsItsLoopsWithDrainAndReturns() async throws {
        let pool = try ReducerPool(threads: 2, name: "draining-pool")
        let loops = try (0..<8).map { index in
            try Spin(initialState: 0) {
                Feedback<Int, CounterEvent>(effect: { _ in nil })
                Reducer(counterReducer.reduce)
            }.start(options: SpinOptions(executor: .pool(pool), maxBatch: 16 + index))
        }
        #expect(pool.liveLoops == 8)
        var accepted = Array(repeating: 0, count: loops.count)
        for (index, loop) in loops.enumerated() {
            for _ in 0..<2_000 where loop.emit(.increment) == .accepted { accepted[index] += 1 }
        }
        // Two callers at once: both return once every loop has finished.
        async let first: Void = pool.shutdown()
        async let second: Void = pool.shutdown()
        try await first
        try await second
        #expect(pool.isShutDown)
        #expect(pool.liveLoops == 0)
        for (index, loop) in loops.enumerated() {
            #expect(loop.isStopped, "loop \(index)")
            #expect(accepted[index] == 2_000)
            #expect(loop.state == accepted[index], "loop \(index): every accepted event reduced")
            #expect(loop.emit(.increment) == .stopped)
            #expect(await loop.stop() == StopReport(reduced: accepted[index], discarded: 0))
        }
        // Once more, after the fact: returns at once.
        try await pool.shutdown()
    }

    @Test func aPoolWithoutLoopsShutsDown() async throws {
        let pool = try ReducerPool(threads: 1, name: "idle-pool")
        let loop = try Spin(initialState: 0, feedbacks: [], reducer: counterReducer)
            .start(options: SpinOptions(executor: .pool(pool)))
        loop.emit(.increment)
        await loop.stop()
        #expect(pool.liveLoops == 0)
        try await pool.shutdown()
        #expect(pool.isShutDown)
    }

    // MARK: A searcher switched out

    /// A schedule wakes no sleeping thread while another one searches the
    /// ready queue: it counts on the searcher. If the kernel switches the
    /// searcher out, the loop would wait as long as the switch (~1 ms on a
    /// shared 2-core machine). The rescue: an emit that finds its loop still
    /// queued while the searchers have not shown they run for a while wakes
    /// the sleeper. The held thread stands for one switched out for as long
    /// as the test needs (without the rescue the loop waits for it and the
    /// hang guard fails the test).
    @Test func aLoopQueuedBehindASwitchedOutSearcherRunsOnTheSleepingThread() async throws {
        let pool = try ReducerPool(threads: 2, name: "switched-out")
        let loop = try Spin(initialState: 0, feedbacks: [], reducer: counterReducer)
            .start(options: SpinOptions(executor: .pool(pool)))
        // The premise: the first event's slice runs on one thread, which
        // then looks for work and is held there, counted as searching; the
        // other sleeps. A thread that starts (or wakes) late may take the
        // hold before the event is queued instead: then, counted as
        // searching, it keeps the emit from waking the sleeper, and the
        // event waits. Arming again lets that thread go (it finds the
        // event, runs it, and is held after the slice), so the premise is
        // reached on every interleaving; arming while the premise builds
        // only hands the hold to the thread that ran the slice.
        pool.holdNextSearcher()
        #expect(loop.emit(.increment) == .accepted)
        let held = await eventually {
            if pool.isHoldingSearcher, loop.state == 0, pool.hasSleepingThread { pool.holdNextSearcher() }
            return pool.isHoldingSearcher && pool.hasSleepingThread && loop.state == 1
        }
        #expect(held, "the pool never had one thread held (\(pool.isHoldingSearcher)) while the other slept (\(pool.hasSleepingThread)) after the first event (state \(loop.state))")

        // The producer keeps emitting, as a loop's producer does; its first
        // emit queues the loop (nobody is woken: a thread searches).
        var accepted = 1
        let reduced = await eventually {
            if loop.emit(.increment) == .accepted { accepted += 1 }
            return loop.state > 1
        }
        #expect(reduced, "the loop waited for the held searcher while the other thread slept")

        pool.releaseHeldSearcher()
        #expect(await loop.stop() == StopReport(reduced: accepted, discarded: 0))
        #expect(loop.state == accepted)
        try await pool.shutdown()
    }

    // MARK: The handoff

    /// An idle loop's event, emitted while the pool's thread sleeps and
    /// nobody searches, is handed to that thread in its slot (no ready
    /// queue), which runs it: every event reduced once, in order. The
    /// premise (the thread asleep at the emit) is the test's to wait for; a
    /// round whose emit found the thread awake (woken early, still
    /// searching) went through the ready queue, and the next round tries
    /// again.
    @Test func anEventForAnIdleLoopIsHandedToTheSleepingThread() async throws {
        let pool = try ReducerPool(threads: 1, name: "handoff")
        let loop = try Spin(initialState: 0, feedbacks: [], reducer: counterReducer)
            .start(options: SpinOptions(executor: .pool(pool)))
        var emitted = 0
        var handedOver = false
        while !handedOver, emitted < 1_000 {
            let asleep = await eventually { pool.hasSleepingThread }
            #expect(asleep, "the pool's thread never slept (\(pool.schedulingSnapshot))")
            let before = pool.handoffs
            #expect(loop.emit(.increment) == .accepted)
            emitted += 1
            let reduced = await eventually { loop.state == emitted }
            #expect(reduced, "the event was not reduced (state \(loop.state) of \(emitted))")
            guard asleep, reduced else { break }
            handedOver = pool.handoffs > before
        }
        #expect(handedOver, "no event of \(emitted) was handed to the sleeping thread")
        #expect(await loop.stop() == StopReport(reduced: emitted, discarded: 0))
        try await pool.shutdown()
    }

    @Test func theSleeperSetWakesTheThreadListedLastThenTheOthersAcrossWords() throws {
        // Three words: indices 5 and 60 in the first, 70 in the second, 129 in the third.
        let set = PoolCore.SleeperSet(capacity: 130)
        for index in [60, 129, 5, 70] { set.list(index) }
        #expect(set.count == 4)
        // The one listed last first; then the highest listed in the first
        // word that has one, and so on.
        #expect(set.wake(handing: 8) == 70)
        #expect(set.wake(handing: 16) == 60)
        #expect(set.wake(handing: 24) == 5)
        #expect(set.wake(handing: PoolCore.Sleeper.look) == 129)
        #expect(set.wake(handing: 32) == nil)
        #expect(set.count == 0)
        // Each woken thread's slot holds what its wake handed over.
        for (index, value) in [(70, UInt(8)), (60, 16), (5, 24), (129, PoolCore.Sleeper.look)] {
            #expect(set.sleeper(index).slot.load(ordering: .relaxed) == value)
        }
        #expect(set.sleeper(70).takeHandedTask() == OpaquePointer(bitPattern: 8))
        #expect(set.sleeper(129).takeHandedTask() == nil, "`look` hands over no task")
        #expect(set.sleeper(129).slot.load(ordering: .relaxed) == 0)
    }

    @Test func aThreadLeavingTheSleeperSetLearnsWhetherAWakeClaimedIt() {
        let set = PoolCore.SleeperSet(capacity: 2)
        set.list(1)
        #expect(!set.leave(1), "nobody claimed the thread: it took itself off")
        #expect(set.count == 0)
        #expect(set.wake(handing: 8) == nil)
        set.list(1)
        #expect(set.wake(handing: 8) == 1)
        // Claimed, its slot filled: `leave` says so and returns at once.
        #expect(set.leave(1))
        #expect(set.sleeper(1).takeHandedTask() == OpaquePointer(bitPattern: 8))
        #expect(set.count == 0)
    }

    @Test(.timeLimit(.minutes(1)))
    func aSleepersLineKeepsItsFieldsApartAndItsParkerWakesTheThreadAWakeClaims() async {
        let set = PoolCore.SleeperSet(capacity: 3)
        let sleeper = set.sleeper(2)
        sleeper.begin()
        sleeper.set(.searching)
        sleeper.countHandedLoop()
        sleeper.countHandedLoop()
        #expect(sleeper.slot.load(ordering: .relaxed) == 0)
        #expect(sleeper.wakerCore.load(ordering: .relaxed) == -1)
        #expect(sleeper.step.load(ordering: .relaxed) == .searching)
        #expect(sleeper.handedLoops.load(ordering: .relaxed) == 2)
        #expect(set.sleeper(1).step.load(ordering: .relaxed) == .starting, "a neighbour's line is its own")
        #expect(set.sleeper(1).handedLoops.load(ordering: .relaxed) == 0)
        // Listed and asleep on its line's parker, the thread gets up for the
        // wake that claims it, with what that wake handed over.
        set.list(2)
        let handed = Recorder<UInt>()
        DispatchQueue.global().async {
            while sleeper.slot.load(ordering: .acquiring) == 0 {
                sleeper.wait(timeoutNanoseconds: 0) { sleeper.slot.load(ordering: .acquiring) != 0 }
            }
            handed.append(sleeper.slot.exchange(0, ordering: .acquiring))
            withExtendedLifetime(set) {}
        }
        #expect(await eventually { sleeper.hasWaiter }, "the thread never went to sleep on its parker")
        #expect(set.wake(handing: 8) == 2)
        #expect(await eventually { handed.values == [8] }, "the woken thread took \(handed.values)")
        #expect(sleeper.wakerCore.load(ordering: .relaxed) >= 0)
        #expect(!sleeper.hasWaiter)
    }

    // MARK: Time slices

    /// A pool's threads and a dedicated thread ask the kernel for its
    /// shortest time slice as they start (`OSThread.reducerSlice`), so that
    /// a wake-up preempts a CPU-bound thread on a busy core at once; they
    /// keep the policy and nice value they inherited (the test's thread's,
    /// unless the process changed its own meanwhile). Read back from the
    /// reducer, on the loop's thread; the slice only where the kernel has
    /// per-thread slices.
    @Test(arguments: [ExecutorKind.sharedPool, .privatePool, .dedicatedThread])
    func reducerThreadsRunOnTheShortestSlice(executor kind: ExecutorKind) async throws {
        let seen = Recorder<String>()
        try await kind.withExecutor { executor in
            let loop = try Spin(initialState: 0, feedbacks: [], reducer: Reducer { state, event in
                let slice = OSThread.currentSlice
                seen.append("slice \(slice.nanoseconds), policy \(slice.policy), nice \(slice.nice)")
                return counterReducer.reduce(state, event)
            }).start(options: SpinOptions(executor: executor))
            #expect(loop.emit(.increment) == .accepted)
            #expect(await eventually { !seen.values.isEmpty })
            await loop.stop()
        }
        let own = OSThread.currentSlice
        let slice = kernelHasCustomSlices && own.policy == 0 ? OSThread.reducerSlice : own.nanoseconds
        #expect(seen.values.first == "slice \(slice), policy \(own.policy), nice \(own.nice)")
    }

    // MARK: Dedicated threads and live objects

    @Test func stopFromAsyncCodeOnADedicatedThreadReturnsAndTheThreadEnds() async throws {
        let reducerThreads = Recorder<Int>()
        let loop = try Spin(initialState: 0, feedbacks: [], reducer: Reducer { state, event in
            if state == 0, let id = currentKernelThreadID() { reducerThreads.append(id) }
            return counterReducer.reduce(state, event)
        }).start(options: SpinOptions(executor: .dedicatedThread))
        for _ in 0..<1_000 { loop.emit(.increment) }
        // Several stops from tasks at once: each returns the same report.
        let reports = await withTaskGroup(of: StopReport.self) { group in
            for _ in 0..<4 { group.addTask { await loop.stop() } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(reports == Array(repeating: StopReport(reduced: 1_000, discarded: 0), count: 4))
        // This loop's own thread, not the process-wide count (other tests
        // start and end dedicated threads meanwhile).
        if kernelThreadFactsAvailable {
            let thread = try #require(reducerThreads.values.first)
            #expect(await eventually { !kernelThreadIsAlive(thread) }, "the dedicated thread \(thread) still runs")
        }
    }

    @Test(arguments: allExecutors)
    func aLoopReleasedWithoutStopDrainsAndFreesEverything(executor kind: ExecutorKind) async throws {
        let probes = ReleaseProbes()
        let reducerThreads = Recorder<Int>()
        try await kind.withExecutor { executor in
            let seen = Recorder<Int>()
            do {
                let (synchronous, queued, reducer) = (probes.probe(), probes.probe(), probes.probe())
                let loop = try Spin(initialState: 0) {
                    Feedback<Int, CounterEvent>(effect: { state in
                        _ = synchronous
                        seen.append(state)
                        return nil
                    })
                    Feedback<Int, CounterEvent>(effect: { _ in
                        _ = queued
                        return nil
                    }, on: DispatchQueue(label: "released.queued"))
                    Reducer { state, event in
                        _ = reducer
                        if state == 0, let id = currentKernelThreadID() { reducerThreads.append(id) }
                        return counterReducer.reduce(state, event)
                    }
                }.start(options: SpinOptions(executor: executor))
                for _ in 0..<1_000 { #expect(loop.emit(.increment) == .accepted) }
            }
            // Released: it drains what it accepted, then lets its feedbacks
            // and its reducer go.
            #expect(await eventually { seen.values.last == 1_000 })
            #expect(await eventually { probes.live == 0 }, "\(probes.live) of the loop's closures still held")
            #expect(seen.values == Array(0...1_000))
        }
        // Its own thread (dedicated) or its pool's (shut down by
        // withExecutor) is gone; the shared pool's and a queue's outlive it.
        // Checked on this loop's thread, not on the process-wide counts,
        // which other tests' loops move meanwhile.
        if kernelThreadFactsAvailable && (kind == .dedicatedThread || kind == .privatePool) {
            let thread = try #require(reducerThreads.values.first)
            #expect(await eventually { !kernelThreadIsAlive(thread) }, "reducer thread \(thread) still runs")
        }
    }
}
