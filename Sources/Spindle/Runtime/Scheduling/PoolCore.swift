internal import Atomics
internal import CSpindle

/// The machinery behind a ``ReducerPool``: its ready queue, its threads,
/// its list of live loops, and the shutdown.
final class PoolCore: LoopExecutor {
    private struct Registry {
        /// The live loops, linked through `ScheduledLoop.poolLinks`;
        /// each link holds a reference (taken at register, released in
        /// `loopFinished`).
        var first: Unmanaged<ScheduledLoop>?
        var count = 0
        var shuttingDown = false
        var threadsStarted = false
        var startError: SpinExecutorError?
        /// Shutdown callers waiting for the loops to finish and the threads to exit.
        var waiters: [CheckedContinuation<Void, Never>] = []
        var threadsRunning = 0
        var done = false
        /// Pool threads waiting in a `.block` emit (see `threadWillBlock`).
        var blockedThreads = 0
        /// Spare threads started to stand in for blocked ones.
        var spareThreads = 0
        /// The thread indices (places in `sleeperSet`) no spare holds.
        var freeSpareIndices: [Int] = []
        /// The sleeper-set indices of the running threads, whose lines hold
        /// their activity (`Sleeper.step`).
        var runningIndices: [Int] = []
    }

    /// What one pool thread is doing, for a stall's report
    /// (`schedulingSnapshot`): one relaxed store per step of its loop (a
    /// pop, a scheduling, a search, a sleep), never per event, on the
    /// thread's line of the sleeper set (`Sleeper.step`).
    enum ThreadStep: UInt8, AtomicValue, CustomStringConvertible {
        case starting, popping, running, searching, sleeping

        var description: String {
            switch self {
            case .starting: "starting"
            case .popping: "popping"
            case .running: "running a loop"
            case .searching: "searching"
            case .sleeping: "sleeping"
            }
        }
    }

    /// The most spare threads a pool starts for threads blocked in `.block`
    /// emits. Beyond that the blocked threads wait on their own: that many
    /// waiting at once means the waits form a cycle, which no thread can
    /// break.
    static let maximumSpareThreads = 32

    let name: String
    let isShared: Bool
    private let threads: Int
    // The C ready queue follows its concurrency table: any thread pushes and pops.
    nonisolated(unsafe) private let readyQueue: OpaquePointer
    /// The threads asleep, each on a parker of its own, by thread index (a
    /// spare's index comes from `Registry.freeSpareIndices`). A wake claims
    /// one (`wakeOne`): one thread gets up for one loop. (Waking every
    /// sleeper would send the others back to sleep, a context switch each,
    /// on cores the woken thread may need.) The set changes only when a
    /// thread sleeps or wakes, so while the pool is busy every producer
    /// reads it from its cache.
    private let sleeperSet: SleeperSet
    /// The atomics below, on one line of their own: every wake-up of a
    /// pool thread reads or writes most of them (an allocation each would put
    /// them on two or three lines, each a miss for a sporadic event).
    /// nonisolated(unsafe): the pointer never changes and is freed only in
    /// deinit; the memory is touched only through the atomic views.
    nonisolated(unsafe) private let words: UnsafeMutableRawPointer
    /// atomic: set once the loops are finished and the threads must exit.
    private let exiting: UnsafeAtomic<Bool>
    /// atomic: threads awake and looking for work (spinning on the ready
    /// queue, or finishing a slice that drained its loop and looking next:
    /// see `runThread`). While one is, a schedule wakes nobody: that thread will find
    /// the loop, and waking a sleeper would move the loop to a cold thread
    /// for the price of a system call.
    private let searching: UnsafeAtomic<Int>
    /// atomic: the monotonic time at which a searcher last showed it was
    /// running (each searcher stores it as it starts and every 16 polls,
    /// about every 3 µs). A search that counts on a searcher the kernel has
    /// switched out would wait as long as the switch (~1 ms on a 2-core
    /// machine): an emit that finds its loop still queued with this beat
    /// older than `stalledSearchNanoseconds` wakes a sleeper instead
    /// (`loopIsWaiting`; the rescue of PROTOCOL.md).
    private let searchBeat: UnsafeAtomic<UInt64>
    /// How old the search beat must be for `loopIsWaiting` to take the
    /// searchers for switched out: three beats or so.
    static let stalledSearchNanoseconds: UInt64 = 10_000
    /// atomic: tests only (`holdNextSearcher`): a `SearchHold` state. Read
    /// once per `waitForWork`.
    private let searchHold: UnsafeAtomic<UInt8>
    /// atomic: the rescues' wakes (for tests and the stress report).
    private let rescueCount: UnsafeAtomic<Int>
    private let holdParker = Parker()
    /// atomic: set once the threads have started, so that a start on the
    /// shared pool does not take the registry lock twice to find out.
    private let threadsReady: UnsafeAtomic<Bool>
    // protected by lock
    private let registry: Lock<Registry>
    /// The parking policy (`AdaptiveSpin`) of a pool thread: how long it
    /// polls the ready queue before it sleeps, from 1 µs up to 64 µs, none
    /// once its sleeps run long. A process whose loops all go idle burns at
    /// most one maximum budget per thread, once, then sleeps until the next
    /// event.
    static func parkingPolicy() -> AdaptiveSpin {
        AdaptiveSpin(first: 1_000, maximum: 64_000, budget: 1_000)
    }

    init(name: String, threads: Int, isShared: Bool) {
        self.name = name
        self.threads = threads
        self.isShared = isShared
        // Offsets: the 8-byte words first, then the bytes.
        let memory = UnsafeMutableRawPointer.allocate(byteCount: 64, alignment: 64)
        words = memory
        searching = memory.initializeAtomic(at: 0, to: 0)
        searchBeat = memory.initializeAtomic(at: 8, to: UInt64(0))
        rescueCount = memory.initializeAtomic(at: 16, to: 0)
        exiting = memory.initializeAtomic(at: 24, to: false)
        searchHold = memory.initializeAtomic(at: 25, to: SearchHold.off)
        threadsReady = memory.initializeAtomic(at: 26, to: false)
        sleeperSet = SleeperSet(capacity: threads + Self.maximumSpareThreads)
        var registry = Registry()
        registry.freeSpareIndices = Array((threads..<threads + Self.maximumSpareThreads).reversed())
        self.registry = Lock(registry)
        guard let queue = spindle_runq_create() else { fatalError("Spindle: out of memory creating a pool") }
        readyQueue = queue
    }

    deinit {
        // The atomic representations need no deinitialization.
        words.deallocate()
        spindle_runq_destroy(readyQueue)
    }

    // MARK: Threads

    /// Starts the threads (once). On failure the threads already started
    /// exit, and the error is kept for every later start.
    func startThreads() throws(SpinExecutorError) {
        let already: (started: Bool, error: SpinExecutorError?) = registry.withLock { registry in
            defer { registry.threadsStarted = true }
            return (registry.threadsStarted, registry.startError)
        }
        if let error = already.error { throw error }
        if already.started { return }
        var started = 0
        var failure: SpinExecutorError?
        for index in 0..<threads {
            registry.withLock { $0.threadsRunning += 1 }
            do {
                try spawnThread(name: "\(name)-\(index)", index: index, spare: false)
                started += 1
            } catch {
                failure = error
                break
            }
        }
        // The shared pool keeps the threads it got; a user's pool is all or nothing.
        if let failure, !isShared || started == 0 {
            registry.withLock { $0.startError = failure }
            exiting.store(true, ordering: .sequentiallyConsistent)
            wakeAll()
            throw failure
        }
        threadsReady.store(true, ordering: .releasing)
    }

    private func runThread(index: Int, spare: Bool) {
        let sleeper = sleeperSet.sleeper(index)
        sleeper.begin()
        registry.withLock { $0.runningIndices.append(index) }
        defer { threadExited(index: index) }
        spindle_thread_set_pool(Unmanaged.passUnretained(self).toOpaque())
        var spin = Self.parkingPolicy()
        // A spare's waits for work since it last ran a loop.
        var idleWaits = 0
        // Whether the next pop follows a wait for work (see the pop rule).
        var waited = false
        // Whether this thread is counted in `searching` since its last
        // slice drained its loop. It counts itself there, before the loop's
        // idle store, because it looks at the ready queue next: the
        // schedules from then on (the loop's own next event, most often)
        // count on it instead of waking a sleeper. Otherwise a busy loop
        // fed by one producer wakes the pool's other thread on nearly every
        // event, two pool threads stay hot, and on a machine with a core
        // each for the producer and the pool they share one core in kernel
        // time slices: the loop waits a whole slice whenever its runner is
        // the one switched out. Model-checked in pool-wake.pml.
        var counted = false
        defer { if counted { searching.wrappingDecrement(ordering: .sequentiallyConsistent) } }
        // The loop a wake handed over, taken out of the slot as the thread
        // woke (`sleep`), and the core that wake was made on (-1: none, or
        // unknown), for the scheduling that follows the wake.
        var handedAtWake: OpaquePointer?
        var wakerCore: Int32 = -1
        while true {
            sleeper.set(.popping)
            let handed = handedAtWake ?? sleeper.takeHandedTask()
            handedAtWake = nil
            if handed != nil { sleeper.countHandedLoop() }
            if let task = handed ?? spindle_runq_pop(readyQueue) {
                sleeper.set(.running)
                idleWaits = 0
                if counted {
                    searching.wrappingDecrement(ordering: .sequentiallyConsistent)
                    counted = false
                }
                // The pop rule (for a loop handed to this thread by the wake
                // as for one popped). A schedule wakes nobody while a thread
                // searches, counting on it to find the loop; but a searcher
                // takes one loop, and that loop's slice may be long or
                // block (a `.block` emit into a loop still in this queue),
                // so loops queued behind it would wait for this thread
                // while another sleeps. So a thread that found work after
                // waiting for it, and sees more queued, makes sure a
                // sleeper looks (Tokio's rule: the last searcher to find
                // work wakes another). A pop straight after a slice needs
                // no wake: a schedule made while this thread ran a slice
                // was not counting on it. Model-checked in pool-wake.pml.
                if waited, !spindle_runq_is_empty(readyQueue) { wakeSleeperIfNobodySearches() }
                waited = false
                // Unretained: a registered loop is kept alive by the
                // registry's reference until `loopFinished`, which runs on
                // its last runner (this local reference outlives it).
                let loop = Unmanaged<ScheduledLoop>.fromOpaque(spindle_task_context(task)!).takeUnretainedValue()
                // Linger (let a batch form) only for a loop that is busy and
                // only while no other loop waits: a slice of one event says
                // events come one at a time, and pausing after it would
                // only delay the next loop.
                let result = loop.runScheduling(
                    linger: { [readyQueue] in spindle_runq_is_empty(readyQueue) },
                    wokenFromCore: wakerCore,
                    beforeIdle: { [searching, searchBeat] in
                        searchBeat.store(spindle_monotonic_ns(), ordering: .relaxed)
                        searching.wrappingIncrement(ordering: .sequentiallyConsistent)
                        counted = true
                        // A search begun at the slice's end is a wait for
                        // work: the next pop follows the pop rule.
                        waited = true
                    })
                wakerCore = -1
                if case .reschedule = result { schedule(loop) }
                continue
            }
            if exiting.load(ordering: .acquiring) { return }
            // A spare leaves once it is not needed: it waited a whole idle
            // period without finding work, and there are no more spares
            // than blocked threads. (Not at once when the queue empties: a
            // blocked thread's wait ends and begins again within
            // microseconds, and a spare leaving in that gap would be
            // started again at once.)
            if spare, idleWaits > 0, retireSpareIfSurplus(index: index) { return }
            (handedAtWake, wakerCore) = waitForWork(
                spin: &spin, timeoutNanoseconds: spare ? Self.spareIdleNanoseconds : 0,
                alreadySearching: counted, sleeper: sleeper, index: index)
            counted = false
            waited = true
            idleWaits &+= 1
        }
    }

    // MARK: Threads blocked in `.block` emits

    /// How long an idle spare sleeps before it checks whether it is still
    /// needed (a blocked thread often waits again right after a wait ends:
    /// a spare that left at once would be started again at once).
    private static let spareIdleNanoseconds: UInt64 = 10_000_000

    /// The pool of the calling thread, nil when it is not a pool thread.
    static var current: PoolCore? {
        spindle_thread_pool().map { Unmanaged<PoolCore>.fromOpaque($0).takeUnretainedValue() }
    }

    /// Called by one of this pool's threads that is about to wait for space
    /// in a full `.block` queue (from a feedback on the loop's executor).
    /// The loop it waits for may need a thread of this very pool to make
    /// that space; with every thread waiting so (a one-thread pool: one
    /// such emit), nothing would: a deadlock. So the pool keeps at least one
    /// thread free to run loops, starting a spare thread when the last one
    /// blocks, as Go's scheduler hands a blocked thread's work to another
    /// and Java's `ForkJoinPool.managedBlock` compensates. (Running other
    /// loops on the waiting thread itself would not do: a slice suspended
    /// low in one thread's stack can be the one a slice above it, on
    /// another thread, waits for — a deadlock again.) Pair with
    /// `threadDidUnblock`.
    func threadWillBlock() {
        let spawn: Int? = registry.withLock { registry in
            registry.blockedThreads += 1
            // A free index for every spare not running (`retireSpareIfSurplus`
            // gives one back as it stops counting its spare).
            guard !exiting.load(ordering: .relaxed),
                  threads + registry.spareThreads - registry.blockedThreads < 1,
                  registry.spareThreads < Self.maximumSpareThreads,
                  let index = registry.freeSpareIndices.popLast() else { return nil }
            registry.spareThreads += 1
            registry.threadsRunning += 1
            return index
        }
        guard let index = spawn else { return }
        // Without a spare the blocked thread waits as it would have; its
        // wait ends when the loop it waits for is run or stopped.
        try? spawnThread(name: "\(name)-spare", index: index, spare: true)
    }

    /// Starts one of the pool's threads. The caller has counted it in
    /// `threadsRunning` (and a spare in `spareThreads`, `index` taken from
    /// the free ones); if the system refuses the thread, those are given
    /// back and the error thrown.
    private func spawnThread(name: String, index: Int, spare: Bool) throws(SpinExecutorError) {
        if !isShared { LiveCounts.reducerThreads.wrappingIncrement(ordering: .relaxed) }
        do {
            try OSThread.spawnDetached(name: name) { [self] in runThread(index: index, spare: spare) }
        } catch {
            registry.withLock { registry in
                registry.threadsRunning -= 1
                if spare {
                    registry.spareThreads -= 1
                    registry.freeSpareIndices.append(index)
                }
            }
            if !isShared { LiveCounts.reducerThreads.wrappingDecrement(ordering: .relaxed) }
            throw error
        }
    }

    /// The wait announced by `threadWillBlock` is over.
    func threadDidUnblock() {
        registry.withLock { $0.blockedThreads -= 1 }
    }

    /// Whether an idle spare should leave (then it is no longer counted,
    /// and its index is free: it is not listed, its slot is empty, and it
    /// touches neither again).
    private func retireSpareIfSurplus(index: Int) -> Bool {
        registry.withLock { registry in
            guard registry.spareThreads > registry.blockedThreads else { return false }
            registry.spareThreads -= 1
            registry.freeSpareIndices.append(index)
            return true
        }
    }

    // Spins while counted as searching, then stops counting and sleeps.
    // No lost wake-up: a scheduler that saw a searcher relies on it, and
    // the searcher re-checks the queue after it stops counting itself and
    // has listed itself as a sleeper (`sleep`), so it sees every push made
    // before the scheduler read the counts. Returns the loop's task a wake
    // handed over, if any, and the core of the wake that ended the sleep
    // (-1: no sleep, no wake, or unknown).
    private func waitForWork(
        spin: inout AdaptiveSpin, timeoutNanoseconds: UInt64, alreadySearching: Bool, sleeper: Sleeper,
        index: Int
    ) -> (handed: OpaquePointer?, wakerCore: Int32) {
        sleeper.set(.searching)
        if !alreadySearching { searching.wrappingIncrement(ordering: .sequentiallyConsistent) }
        let spinStart = spindle_monotonic_ns()
        searchBeat.store(spinStart, ordering: .relaxed)
        if searchHold.load(ordering: .relaxed) == SearchHold.armed { holdThisSearcher() }
        var gap = 1
        var polls = 0
        // A budget of nothing: one look at the queue, then sleep.
        while spin.budget > 0 {
            if !spindle_runq_is_empty(readyQueue) || exiting.load(ordering: .relaxed) {
                searching.wrappingDecrement(ordering: .sequentiallyConsistent)
                return (nil, -1)
            }
            for _ in 0..<gap { spindle_cpu_relax() }
            if gap < 8 { gap <<= 1 }
            // The clock only every 16 polls: reading it costs more than a poll.
            polls &+= 1
            if polls & 15 == 0 {
                let now = spindle_monotonic_ns()
                searchBeat.store(now, ordering: .relaxed)
                if now &- spinStart >= spin.budget { break }
            }
        }
        searching.wrappingDecrement(ordering: .sequentiallyConsistent)
        sleeper.set(.sleeping)
        let sleepStart = spindle_monotonic_ns()
        let core = spindle_current_cpu()
        let (handed, wakerCore) = sleep(index, sleeper: sleeper, timeoutNanoseconds: timeoutNanoseconds)
        spin.slept(nanoseconds: spindle_monotonic_ns() &- sleepStart, onCore: core, wokenFromCore: wakerCore)
        return (handed, wakerCore)
    }

    // MARK: Sleeping and waking

    /// A pool thread's line of the sleeper set: the slot in which the wake
    /// that claimed the thread leaves the loop it is woken for, the waker's
    /// core, the thread's parker (which that wake notifies), and what the
    /// thread is doing (its step, its count of handed loops). One line for
    /// the wake to write and the woken thread to read first, and for the
    /// thread's own bookkeeping: a sporadic event, whose lines are cold,
    /// loads every line it touches (`scripts/wake-footprint.sh`), and
    /// objects of their own (a sleeper, a parker and its memory, an
    /// activity and its atomics) would be six.
    ///
    /// Thread safety: the fields are atomics, and the C parker synchronizes
    /// itself; the slot and the waker's core are written by the wake that
    /// claimed the thread, the step and the count by the thread itself.
    // @unchecked Sendable: `line` points into the sleeper set's storage,
    // which outlives every use of it (the set is freed with its pool, after
    // its threads have exited), and is touched only through the atomic
    // views and the C parker.
    struct Sleeper: @unchecked Sendable {
        /// The slot's value for a wake with no loop: look at the ready queue
        /// (the pop rule, the rescue, the exit). A task's address is never
        /// 1 (tasks are 8-aligned).
        static let look: UInt = 1

        // The line's layout: the slot, the waker's core, the step, the
        // count of handed loops, then the parker (`spindle_parker_init`).
        private static let wakerCoreOffset = 8
        private static let stepOffset = 12
        private static let handedLoopsOffset = 16
        private static let parkerOffset = 24
        /// The bytes a sleeper takes in the set's storage: one line where
        /// the parker is three words (Linux), more where it holds a mutex
        /// and a condition.
        static var stride: Int {
            (parkerOffset + spindle_parker_size() + 63) / 64 * 64
        }

        let line: UnsafeMutableRawPointer

        /// Binds and initializes the line (the set's `init`).
        static func initialize(at line: UnsafeMutableRawPointer) {
            line.initializeAtomic(at: 0, to: UInt(0))
            line.initializeAtomic(at: wakerCoreOffset, to: Int32(-1))
            line.initializeAtomic(at: stepOffset, to: ThreadStep.starting)
            line.initializeAtomic(at: handedLoopsOffset, to: 0)
            _ = spindle_parker_init(line + parkerOffset)
        }

        /// Ends the line's parker (the set's `deinit`).
        static func deinitialize(at line: UnsafeMutableRawPointer) {
            spindle_parker_deinit(OpaquePointer(line + parkerOffset))
        }

        /// atomic: 0, `look`, or the address of the task of the loop handed
        /// to this thread. Written only by the wake that claimed this
        /// thread (cleared its bit in the set: so at most once per listing);
        /// emptied by the thread (as it wakes, or `takeHandedTask`) before
        /// it lists itself again, which it does only once a claim's store
        /// has landed. So a thread that wakes with its slot full was
        /// claimed. pool-wake.pml checks it.
        var slot: UnsafeAtomic<UInt> {
            @inline(__always) get { line.atomic(at: 0) }
        }

        /// atomic: the core the wake that filled the slot ran on (-1:
        /// unknown), written with it. A hint for the parking policy
        /// (`AdaptiveSpin`), never for the protocol.
        var wakerCore: UnsafeAtomic<Int32> {
            @inline(__always) get { line.atomic(at: Self.wakerCoreOffset) }
        }

        /// atomic: the thread's step (for a stall's report).
        var step: UnsafeAtomic<ThreadStep> {
            @inline(__always) get { line.atomic(at: Self.stepOffset) }
        }

        /// atomic: the loops a wake handed to this thread in its slot since
        /// it started (for tests); written by the thread only.
        var handedLoops: UnsafeAtomic<Int> {
            @inline(__always) get { line.atomic(at: Self.handedLoopsOffset) }
        }

        private var parker: OpaquePointer {
            @inline(__always) get { OpaquePointer(line + Self.parkerOffset) }
        }

        /// A thread takes the line (its index): its activity starts afresh.
        func begin() {
            step.store(.starting, ordering: .relaxed)
            handedLoops.store(0, ordering: .relaxed)
        }

        @inline(__always)
        func set(_ value: ThreadStep) { step.store(value, ordering: .relaxed) }

        /// One more loop handed over (the thread's own count: a load and a
        /// store).
        @inline(__always)
        func countHandedLoop() {
            handedLoops.store(handedLoops.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
        }

        /// Sleeps until notified, `condition` holds, or `timeoutNanoseconds`
        /// pass (0: no timeout); may also return spuriously (`Parker.wait`
        /// with no spinning).
        @inline(__always)
        func wait(timeoutNanoseconds: UInt64, until condition: () -> Bool) {
            parkOnce(parker, timeoutNanoseconds: timeoutNanoseconds, until: condition)
        }

        /// Wakes the thread if it sleeps on the parker.
        @inline(__always)
        func notify() { spindle_parker_notify(parker) }

        /// Tests: a thread is registered to sleep on the parker.
        var hasWaiter: Bool { spindle_parker_has_waiters(parker) }

        /// The loop's task a wake handed to this thread, if any; empties the
        /// slot. A load first: on a busy thread the slot stays empty, and
        /// the load leaves its line shared.
        @inline(__always)
        func takeHandedTask() -> OpaquePointer? {
            guard slot.load(ordering: .relaxed) != 0 else { return nil }
            return Self.task(in: slot.exchange(0, ordering: .acquiring))
        }

        /// The loop's task a slot's `value` holds: nil for an empty slot
        /// and for `look`.
        @inline(__always)
        static func task(in value: UInt) -> OpaquePointer? {
            value == look ? nil : OpaquePointer(bitPattern: value)
        }
    }

    /// Sleeps until a wake claims the thread, a loop is queued, the pool
    /// exits, or `timeoutNanoseconds` pass (0: no timeout); the thread is
    /// off the set when it returns. Returns the loop's task the wake that
    /// claimed it left in its slot (the slot emptied: one exchange, where a
    /// load first would cost the line twice), nil for none or `look`, and
    /// that wake's core; nil and -1 when no wake claimed it (or the core
    /// is unknown).
    ///
    /// The order is the protocol (pool-wake.pml): list itself (a
    /// sequentially consistent RMW), prepare the parker, then re-check the
    /// slot, the queue and the exit. A schedule either hands its loop to a
    /// listed thread (claiming it, then filling its slot, then notifying
    /// its parker: the slot covers a notify made before the parker was
    /// prepared), or pushes (an exchange), then reads the set: either it
    /// sees this thread (and wakes it the same way, with `look` in the
    /// slot), or the re-check sees the loop.
    private func sleep(
        _ index: Int, sleeper: Sleeper, timeoutNanoseconds: UInt64
    ) -> (handed: OpaquePointer?, wakerCore: Int32) {
        // The slot is empty here: the thread emptied it at its last look
        // for work, and no wake fills it while the thread is not listed.
        assert(sleeper.slot.load(ordering: .relaxed) == 0, "Spindle: a pool thread listed itself with a full slot")
        sleeperSet.list(index)
        sleeper.wait(timeoutNanoseconds: timeoutNanoseconds) { [readyQueue, exiting] in
            sleeper.slot.load(ordering: .acquiring) != 0 || !spindle_runq_is_empty(readyQueue)
                || exiting.load(ordering: .relaxed)
        }
        // A full slot: a wake claimed the thread (only that wake fills it).
        // An empty one: woken by its own re-check, a timeout or a stray
        // notify (a wake meant for an earlier sleep), and still listed,
        // unless a wake claimed it and has not filled the slot yet.
        var handed = sleeper.slot.exchange(0, ordering: .acquiring)
        if handed == 0 {
            guard sleeperSet.leave(index) else { return (nil, -1) }
            handed = sleeper.slot.exchange(0, ordering: .acquiring)
        }
        let task = Sleeper.task(in: handed)
        // A loop handed over: start loading its lines now, beside the
        // parking policy's bookkeeping, instead of one miss after another
        // as its run reaches them.
        if let task { spindle_task_prefetch(task, LoopWords.taskOffset, 512) }
        return (task, sleeper.wakerCore.load(ordering: .relaxed))
    }

    /// Claims a sleeping thread (the one that listed itself last, if it
    /// still sleeps), fills its slot with `task` (or `Sleeper.look`) and
    /// wakes it; false when none sleeps. A thread that went to sleep last
    /// has the warmest cache and, on a machine whose idle cores halt, the
    /// core most likely still awake.
    @discardableResult
    private func wakeOne(handing task: OpaquePointer? = nil) -> Bool {
        sleeperSet.wake(handing: task.map { UInt(bitPattern: $0) } ?? Sleeper.look) != nil
    }

    /// Wakes every sleeping thread (the pool exits).
    private func wakeAll() { sleeperSet.wakeAll() }

    // MARK: Tests: a searcher switched out

    /// The states of `searchHold`.
    private enum SearchHold {
        static let off: UInt8 = 0
        static let armed: UInt8 = 1
        static let holding: UInt8 = 2
        static let released: UInt8 = 3
    }

    /// Tests: the next thread that starts looking for work stops there,
    /// counted as searching and with its beat written, as if the kernel had
    /// switched it out mid-search, until `releaseHeldSearcher`. (Arming
    /// while a thread is held lets that one go.)
    func holdNextSearcher() {
        let previous = searchHold.exchange(SearchHold.armed, ordering: .sequentiallyConsistent)
        if previous == SearchHold.holding { holdParker.notify() }
    }

    /// Tests: a thread is held by `holdNextSearcher`.
    var isHoldingSearcher: Bool {
        searchHold.load(ordering: .sequentiallyConsistent) == SearchHold.holding
    }

    /// Tests: the rescue's wakes so far.
    var rescues: Int { rescueCount.load(ordering: .relaxed) }

    /// Tests: the loops handed to a sleeping thread in its slot so far (by
    /// the threads running now).
    var handoffs: Int {
        let indices = registry.withLock { $0.runningIndices }
        return indices.reduce(0) { $0 + sleeperSet.sleeper($1).handedLoops.load(ordering: .relaxed) }
    }

    /// Tests: a thread of the pool sleeps (listed in the sleeper set).
    var hasSleepingThread: Bool { sleeperSet.isNonEmpty }

    /// Tests: lets the held thread go on, or disarms a hold not yet taken;
    /// nothing otherwise. (Between the two exchanges a searcher may take
    /// the hold: then the first fails and the second lets it go.)
    func releaseHeldSearcher() {
        if searchHold.compareExchange(
            expected: SearchHold.armed, desired: SearchHold.off, ordering: .sequentiallyConsistent
        ).exchanged { return }
        if searchHold.compareExchange(
            expected: SearchHold.holding, desired: SearchHold.released, ordering: .sequentiallyConsistent
        ).exchanged { holdParker.notify() }
    }

    /// The held thread waits while the state says `holding`, whatever ends
    /// it: a release, or a test arming the next hold before this thread has
    /// run again (waiting for `released` itself would miss that one and
    /// hold this thread for good).
    @inline(never)
    private func holdThisSearcher() {
        guard searchHold.compareExchange(
            expected: SearchHold.armed, desired: SearchHold.holding, ordering: .sequentiallyConsistent
        ).exchanged else { return }
        // A parker's sleep may end early (a signal): wait until let go.
        while searchHold.load(ordering: .sequentiallyConsistent) == SearchHold.holding {
            holdParker.wait(spins: 0) { [searchHold] in
                searchHold.load(ordering: .sequentiallyConsistent) != SearchHold.holding
            }
        }
        // Back to off, unless the next hold is armed already.
        _ = searchHold.compareExchange(
            expected: SearchHold.released, desired: SearchHold.off, ordering: .sequentiallyConsistent)
    }

    private func threadExited(index: Int) {
        let waiters: [CheckedContinuation<Void, Never>] = registry.withLock { registry in
            if let place = registry.runningIndices.firstIndex(of: index) { registry.runningIndices.remove(at: place) }
            registry.threadsRunning -= 1
            guard registry.threadsRunning == 0, registry.shuttingDown else { return [] }
            registry.done = true
            defer { registry.waiters = [] }
            return registry.waiters
        }
        if !isShared { LiveCounts.reducerThreads.wrappingDecrement(ordering: .relaxed) }
        for waiter in waiters { waiter.resume() }
    }

    // MARK: LoopExecutor

    func schedule(_ loop: ScheduledLoop) {
        // No reference for the queue: only registered loops are scheduled
        // (a loop whose registration failed is finished from birth, and a
        // finished loop is never woken), and the registry holds one until
        // the loop's last runner calls `loopFinished`. Taking one here would
        // be a read-modify-write of a line the runner owns, on every wake.
        //
        // Someone sleeps and nobody searches: hand the loop to the sleeper
        // the wake claims (its slot), not through the ready queue: the
        // woken thread starts it without a pop, and the emit writes no line
        // of the queue. The loads are only a guess (a searcher that starts
        // after them finds nothing and sleeps again); with nobody listed by
        // the time of the claim, the push below decides as before.
        if sleeperSet.looksNonEmpty, searching.load(ordering: .relaxed) == 0,
           wakeOne(handing: loop.task) { return }
        spindle_runq_push(readyQueue, loop.task)
        // The push is an exchange (a full barrier), so these loads see a
        // sleeper or a searcher that could have missed it. Wake only when
        // someone sleeps and nobody searches; then one thread. Sleepers
        // first: their set changes only when a thread parks or wakes, so
        // while the pool is busy this load reads a line every producer
        // shares, where `searching` changes each time a pool thread runs
        // out of work. A thread that lists itself after this load re-checks
        // the queue after listing, and sees the push.
        wakeSleepersIfNobodySearchesAfterRMW()
    }

    /// Wakes a sleeping thread when nobody is searching, for a caller
    /// that saw loops waiting in the ready queue. A fence first: the caller
    /// read the queue, and a thread that counts itself a sleeper after the
    /// loads below re-checks the queue itself.
    private func wakeSleeperIfNobodySearches() {
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        wakeSleepersIfNobodySearchesAfterRMW()
    }

    /// The wake shared by `schedule` and the pop rule, for a caller whose
    /// last write was a sequentially consistent RMW or fence.
    @inline(__always)
    private func wakeSleepersIfNobodySearchesAfterRMW() {
        if sleeperSet.isNonEmpty, searching.load(ordering: .sequentiallyConsistent) == 0 { wakeOne() }
    }

    /// The rescue: an emit found its loop still queued. When a thread
    /// sleeps while the ones counted as searching have not shown they run
    /// for `stalledSearchNanoseconds`, they are switched out (preempted by
    /// another thread or the kernel's own work): wake a sleeper, which
    /// runs the loop now rather than after the switch. A heuristic that can
    /// only add wakes (a beat that looks old to a lagging clock read wakes a
    /// thread for nothing); `schedule`'s rule still decides alone whether a
    /// push wakes anyone. Loads only, unless it wakes: while the pool is
    /// saturated (nobody sleeps), one load of the sleeper count.
    func loopIsWaiting() {
        guard sleeperSet.looksNonEmpty, searching.load(ordering: .relaxed) > 0 else { return }
        if spindle_monotonic_ns() &- searchBeat.load(ordering: .relaxed) > Self.stalledSearchNanoseconds {
            rescueCount.wrappingIncrement(ordering: .relaxed)
            wakeOne()
        }
    }

    func register(_ loop: ScheduledLoop) throws(SpinExecutorError) {
        if isShared, !threadsReady.load(ordering: .acquiring) { try startThreads() }
        let refusal: SpinExecutorError? = registry.withLock { registry in
            if let error = registry.startError { return error }
            guard !registry.shuttingDown else { return .poolShutDown(pool: name) }
            // The registry's reference: the loop lives until it finished
            // (released in `loopFinished`), which lets the ready queue hold
            // loops without references of its own.
            let node = Unmanaged.passRetained(loop)
            loop.poolLinks.next = registry.first
            loop.poolLinks.previous = nil
            registry.first?.takeUnretainedValue().poolLinks.previous = node
            registry.first = node
            registry.count += 1
            return nil
        }
        if let refusal { throw refusal }
    }

    func loopFinished(_ loop: ScheduledLoop) {
        let lastOut = registry.withLock { registry -> Bool in
            let previous = loop.poolLinks.previous
            let next = loop.poolLinks.next
            if let previous {
                previous.takeUnretainedValue().poolLinks.next = next
            } else {
                registry.first = next
            }
            next?.takeUnretainedValue().poolLinks.previous = previous
            loop.poolLinks.previous = nil
            loop.poolLinks.next = nil
            registry.count -= 1
            return registry.count == 0 && registry.shuttingDown
        }
        // The registry's reference (the caller, the loop's last runner,
        // holds its own until it returns).
        Unmanaged.passUnretained(loop).release()
        if lastOut { releaseThreads() }
    }

    /// Tests: see `ReducerPool.schedulingSnapshot`.
    var schedulingSnapshot: String {
        let (blocked, spares, running, indices) = registry.withLock {
            ($0.blockedThreads, $0.spareThreads, $0.threadsRunning, $0.runningIndices)
        }
        let steps = indices.map { "\(sleeperSet.sleeper($0).step.load(ordering: .relaxed))" }
        return "threads running \(running) (spares \(spares), blocked \(blocked)) \(steps), "
            + "searching \(searching.load(ordering: .sequentiallyConsistent)), "
            + "sleeping \(sleeperSet.count), ready queue empty \(spindle_runq_is_empty(readyQueue))"
    }

    var liveLoops: Int { registry.withLock { $0.count } }
    var spareThreads: Int { registry.withLock { $0.spareThreads } }

    var isShuttingDown: Bool { registry.withLock { $0.shuttingDown } }

    // MARK: Shutdown

    func shutdown() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let (alreadyDone, loops, noLoops): (Bool, [ScheduledLoop], Bool) = registry.withLock { registry in
                if registry.done { return (true, [], false) }
                registry.waiters.append(continuation)
                guard !registry.shuttingDown else { return (false, [], false) }
                registry.shuttingDown = true
                var loops: [ScheduledLoop] = []
                loops.reserveCapacity(registry.count)
                var node = registry.first
                while let current = node {
                    // The registry's reference keeps a loop alive until its
                    // finish has run (which unlinks it under this lock).
                    loops.append(current.takeUnretainedValue())
                    node = current.takeUnretainedValue().poolLinks.next
                }
                return (false, loops, registry.count == 0)
            }
            if alreadyDone {
                continuation.resume()
                return
            }
            // Outside the lock: a stop request runs no user code, but it may
            // finish a loop (which takes the lock to unlink itself).
            for loop in loops { loop.requestStopForShutdown() }
            if noLoops { releaseThreads() }
        }
    }

    private func releaseThreads() {
        let threadsRunning = registry.withLock { $0.threadsRunning }
        exiting.store(true, ordering: .sequentiallyConsistent)
        wakeAll()
        if threadsRunning == 0 {
            // No thread was ever started: nobody else resumes the waiters.
            let waiters = registry.withLock { registry in
                registry.done = true
                defer { registry.waiters = [] }
                return registry.waiters
            }
            for waiter in waiters { waiter.resume() }
        }
    }
}
