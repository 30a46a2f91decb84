internal import Atomics
internal import CSpindle

/// The scheduling half of a loop, which every executor runs the same way:
/// the protocol of `Model/PROTOCOL.md` (checked with SPIN by
/// `scripts/model-check.sh`).
///
/// | state | event | next |
/// | --- | --- | --- |
/// | idle | emit / wake, CAS won | scheduled (pushed once) |
/// | scheduled | a runner pops it | running (CAS; never two runners) |
/// | running | budget used, work left | scheduled (pushed at the tail) |
/// | running | drained | idle, then re-check; work seen → scheduled |
/// | running | grace period passed, all drained | finished |
///
/// Subclassed once, by the generic `LoopCore`; executors see only this
/// non-generic class (an executor's ready queue holds loops of every type).
///
/// `@unchecked Sendable`: a non-final class cannot be checked. Every stored
/// property here is immutable or an atomic; `LoopCore` labels its own.
// `@usableFromInline`: `SpinLoop.emit`'s lane fast path is inlined into
// callers (see `SpinLoop.emit`), and reaches its `LoopCore`.
@usableFromInline
class ScheduledLoop: @unchecked Sendable {
    /// The loop's hot atomics, on one cache line (see `LoopWords`).
    let words = LoopWords()
    /// atomic: any thread. The protocol's state word.
    var schedulingState: UnsafeAtomic<SchedulingState> {
        @inline(__always) get { words.schedulingState }
    }
    // Laid out as declared: what an emit reads on any thread (the words'
    // pointer, `executorMayRunHere`, the executor) first, never written
    // after the start; then the runner's idle bookkeeping, which the
    // runner writes at every idle transition (apart from the former, so
    // that those writes do not take the line from producers' cores). 72
    // bytes in all in a release build, header included: `LoopCore`'s hot
    // fields follow at once.
    /// Whether the executor may let an emit run the loop in place
    /// (`LoopExecutor.runsHere`): asked once, so that every other
    /// executor's wakes skip the call. Immutable.
    let executorMayRunHere: Bool
    /// The C node that links the loop into a ready queue (in `words`'
    /// allocation, at a constant offset: no stored field for it).
    var task: OpaquePointer {
        @inline(__always) get { words.task }
    }
    /// Runs the loop. Immutable.
    let executor: any LoopExecutor
    /// The thread that last left this loop idle, and its scheduling count
    /// then (`spindle_thread_scheduling_count`): the next runner tells from
    /// them whether the loop came back to a thread that ran nothing else
    /// meanwhile (see `waitForNextEvent`). Runner only (one at a time; the
    /// state CAS orders consecutive runners), which is why these stored
    /// properties are `nonisolated(unsafe)`.
    nonisolated(unsafe) private var idleThread: UInt = 0
    nonisolated(unsafe) private var idleSchedulings: UInt64 = 0
    /// The pauses a lingering runner waits for a batch to form
    /// (`waitForBatch`; at most `maximumFormationPauses`). Runner only.
    nonisolated(unsafe) private var storedFormationPauses: Int32 = 8
    /// The idle wait's backoff (see `waitForNextEvent`): idle transitions
    /// to go before the next wait (at most 64), and how many waits in a row
    /// saw nothing (at most 6). Runner only.
    nonisolated(unsafe) private var storedIdleWaitSkips: Int16 = 0
    nonisolated(unsafe) private var storedIdleWaitMisses: Int8 = 0
#if DEBUG
    /// Tests: the waits for the next event the runner made, and the ones it
    /// left out because the wake that began its scheduling came from its
    /// own core (`waitForNextEvent`). Debug builds only; any thread reads.
    let idleWaitsMade = ManagedAtomic<Int>(0)
    let idleWaitsLeftOutOnWakerCore = ManagedAtomic<Int>(0)
#endif
    /// atomic: the thread running a slice (its pthread id), 0 between slices.
    /// An emit from that thread is an emit from the loop's own executor.
    var runnerToken: UnsafeAtomic<UInt> {
        @inline(__always) get { words.runnerToken }
    }
    // The stored counters above (narrowed: their ranges are small, and the
    // runner's bookkeeping then takes 24 bytes), as the `Int`s the
    // scheduling computes with.
    private var formationPauses: Int {
        @inline(__always) get { Int(storedFormationPauses) }
        @inline(__always) set { storedFormationPauses = Int32(truncatingIfNeeded: newValue) }
    }
    private var idleWaitSkips: Int {
        @inline(__always) get { Int(storedIdleWaitSkips) }
        @inline(__always) set { storedIdleWaitSkips = Int16(truncatingIfNeeded: newValue) }
    }
    private var idleWaitMisses: Int {
        @inline(__always) get { Int(storedIdleWaitMisses) }
        @inline(__always) set { storedIdleWaitMisses = Int8(truncatingIfNeeded: newValue) }
    }

    /// How long a runner waits for a loop's next event before its idle
    /// transition (`waitForNextEvent`): about what a lane's fence costs, and
    /// several closed-loop round trips between cores.
    static let idleWaitNanoseconds: UInt64 = 2_000
    /// The batch a lingering runner lets form before it looks again
    /// (`waitForBatch`): its wait doubles while slices drain fewer events,
    /// and halves while they drain more than twice as many.
    static let formationTarget = 256
    /// The longest wait for a batch to form, in pauses and in time: what
    /// one event of a busy loop may wait on top of the slice before it.
    static let maximumFormationPauses = 1_024
    static let formationWaitNanoseconds: UInt64 = 2_000
    /// The longest wait after a slice that drained under an eighth of the
    /// target: a stream too slow for a batch to form within the longest
    /// wait, so waiting longer would only delay its events. About a
    /// cross-core round trip in the machine's slow phase, so a look still
    /// costs a producer at most about half its time: a producer held back by
    /// the runner's looks catches up in larger batches, which end this
    /// shorter wait.
    static let slowStreamWaitNanoseconds: UInt64 = 500

    /// Pool membership (see `PoolCore.register`): the loop's links in its
    /// pool's list of live loops. protected by the pool's registry lock: read
    /// and written only inside `registry.withLock`. Kept in the words'
    /// allocation, after the task (`LoopWords.poolLinks`): no path but a
    /// start's and a finish's touches them, and in the object they cost
    /// every loop 16 bytes between its hot fields.
    var poolLinks: PoolLinks {
        get { words.poolLinks }
        set { words.poolLinks = newValue }
    }

    /// The neighbours in a pool's intrusive list of live loops (unretained:
    /// the registry holds one reference per listed loop).
    struct PoolLinks {
        var previous: Unmanaged<ScheduledLoop>?
        var next: Unmanaged<ScheduledLoop>?
    }

    init(executor: any LoopExecutor) {
        self.executor = executor
        self.executorMayRunHere = executor.mayRunHere
        // Unretained: the loop owns the task. An executor keeps a loop it
        // queues alive (a pool's registry holds a reference until
        // `loopFinished`; a dedicated thread and a dispatch work item hold
        // their own).
        spindle_task_set_context(task, Unmanaged.passUnretained(self).toOpaque())
    }

    deinit {
        words.deallocate()
    }

    // MARK: The subclass's part

    /// Runs up to `budget` events. Runner only.
    func runSlice(budget: Int) -> SliceOutcome { fatalError("subclass") }

    /// Whether the loop has work a runner could see from outside a slice:
    /// queued events, a subscriber waiting, a finished grace period. Any
    /// thread, without touching runner-only state (another runner may be
    /// running the loop by the time this is called).
    func hasVisibleWork() -> Bool { fatalError("subclass") }

    /// Whether the runner, still inside its scheduling, sees more work
    /// (includes runner-only queues). Runner only.
    func runnerSeesWork() -> Bool { fatalError("subclass") }

    /// Whether the loop's idle transition costs its runner a fence: the
    /// re-check after the idle store calls membarrier when producers emit
    /// on lanes (LANES.md). Runner only.
    func idleCostsFence() -> Bool { false }

    /// The most events a slice may reduce before yielding its thread.
    var budget: Int { fatalError("subclass") }

    /// Stops the loop with drain because its pool shuts down. Any thread.
    func requestStopForShutdown() { fatalError("subclass") }

    /// The stop's grace period has passed (on Spindle's grace thread; see
    /// `spindle_task_after_grace_period`).
    func gracePeriodEnded() { fatalError("subclass") }

    // MARK: The protocol

    /// Schedules the loop if it is idle: `idle → scheduled`, and the one
    /// caller whose CAS wins hands it to the executor. Any thread; call it
    /// after the write that made the loop runnable, with a full barrier in
    /// between (a sequentially consistent RMW or store).
    /// Returns true when this call scheduled the loop (it found it idle).
    @inline(__always)
    @discardableResult
    final func wake() -> Bool {
        wake(emitterMayRun: false) != .notScheduled
    }

    /// `wake()` for an emit, which may run the loop itself: when this call
    /// wins the CAS and the executor says the calling thread is its own
    /// serial context, outside every slice (`LoopExecutor.runsHere`), the
    /// loop is not handed to the executor: the answer is `.runHere`, and
    /// the emit must call `runHere()` once it has left its gate section
    /// and reported to the observers (the inline fast path; PROTOCOL.md).
    @inline(__always)
    final func wake(emitterMayRun: Bool) -> WakeOutcome {
        let state = schedulingState.load(ordering: .sequentiallyConsistent)
        guard state == .idle else {
            // Queued and not yet running: the executor may check that
            // whoever should run it is not switched out (a pool's rescue).
            if state == .scheduled { executor.loopIsWaiting() }
            return .notScheduled
        }
        if schedulingState.compareExchange(
            expected: .idle, desired: .scheduled, ordering: .sequentiallyConsistent
        ).exchanged {
            if emitterMayRun, executorMayRunHere, executor.runsHere() { return .runHere }
            executor.schedule(self)
            return .scheduled
        }
        return .notScheduled
    }

    /// Runs the scheduling that `wake(emitterMayRun:)` gave the calling
    /// thread (`.runHere`): on the executor's own context, outside every
    /// gate section, lock and slice. Like an enqueued scheduling, one or
    /// more slices; a loop with work left after its budget is handed to
    /// the executor, behind the context's other work.
    final func runHere() {
        finishHere(runScheduling(linger: { false }))
    }

    /// The direct path's take, for an emit on the loop's own executor that
    /// found the shared queue empty: `idle → running` in one CAS, instead
    /// of `idle → scheduled` and then `scheduled → running`, when the
    /// calling thread is the executor's own serial context outside every
    /// slice (`LoopExecutor.runsHere`). True when this call took the loop:
    /// the caller now owns the runner's side, may hand its event to the
    /// runner's own queue (no shared queue, no splice), and must call
    /// `runTakenHere()` once it has left its gate section (PROTOCOL.md, the
    /// direct path). `contextKnown`: the caller knows it is that context,
    /// outside every slice (the in-place path, `LoopCore.emitOnOwnExecutor`),
    /// so the executor is not asked. Any thread.
    @inline(__always)
    final func takeToRunHere(contextKnown: Bool = false) -> Bool {
        guard schedulingState.load(ordering: .relaxed) == .idle,
              contextKnown || executor.runsHere() else { return false }
        return schedulingState.compareExchange(
            expected: .idle, desired: .running, ordering: .sequentiallyConsistent
        ).exchanged
    }

    /// Runs the scheduling that `takeToRunHere()` gave the calling thread:
    /// `runHere()` without the `scheduled → running` step.
    final func runTakenHere() {
        runTakenHere(firstSlice: { runSlice(budget: budget) })
    }

    /// `runTakenHere()` whose first slice is `firstSlice` (the in-place
    /// path's, which reduces the emit's own event first; see
    /// `LoopCore.emitOnOwnExecutor`). Non-escaping: no allocation.
    final func runTakenHere(firstSlice: () -> SliceOutcome) {
        finishHere(runTaken(linger: { false }, beforeIdle: {}, firstSlice: firstSlice))
    }

    private func finishHere(_ result: RunResult) {
        switch result {
        case .reschedule: executor.schedule(self)
        case .finished: executor.loopFinished(self)
        case .idle: break
        }
    }

    /// Hands the loop to its executor for the first time (it is created
    /// `scheduled`, so that its first slice delivers the initial state).
    final func scheduleFirstRun() {
        executor.schedule(self)
    }

    /// Runs one scheduling of the loop: `scheduled → running`, one slice (or
    /// several while `linger` says no other loop is waiting), then `idle`,
    /// `scheduled` or `finished`. Called by the executor that popped it.
    ///
    /// - Parameter linger: true when the runner may keep the loop a little
    ///   longer: no other loop is waiting for this thread. Asked after a
    ///   slice that reduced more than one event, and after one that reduced
    ///   one when the loop may be a closed loop (`waitForNextEvent`); a
    ///   loop whose events come one at a time otherwise gains nothing from
    ///   waiting.
    /// - Parameter wokenFromCore: the core of the wake that brought the
    ///   calling thread out of its sleep for this scheduling, -1 when it did
    ///   not sleep or the core is unknown (see `waitForNextEvent`).
    /// - Parameter beforeIdle: called once the slice drained the loop, just
    ///   before the loop's idle store (a pool thread counts itself as
    ///   searching there: see `PoolCore.runThread`). Runs no user code.
    final func runScheduling(
        linger: () -> Bool, wokenFromCore: Int32 = -1, beforeIdle: () -> Void = {}
    ) -> RunResult {
        let won = schedulingState.compareExchange(
            expected: .scheduled, desired: .running, ordering: .acquiringAndReleasing
        ).exchanged
        precondition(won, "Spindle: a loop was run while not scheduled (two runners)")
        return runTaken(
            linger: linger, wokenFromCore: wokenFromCore, beforeIdle: beforeIdle,
            firstSlice: { runSlice(budget: budget) })
    }

    /// `runScheduling` once the loop is `running` and the calling thread
    /// owns it: its slices, then `idle`, `scheduled` or `finished`.
    private func runTaken(
        linger: () -> Bool, wokenFromCore: Int32 = -1, beforeIdle: () -> Void, firstSlice: () -> SliceOutcome
    ) -> RunResult {
        spindle_thread_enter_slice()
        defer { spindle_thread_leave_slice() }
        let thread = currentThreadToken()
        runnerToken.store(thread, ordering: .relaxed)
        let backOnIdleThread = idleThread == thread
            && idleSchedulings &+ 1 == spindle_thread_scheduling_count()
        var outcome = firstSlice()
        while case .drained(let reduced) = outcome {
            if reduced > 1 {
                guard linger(), waitForBatch(after: reduced, linger: linger) else { break }
            } else {
                guard reduced == 1,
                      waitForNextEvent(
                          backOnIdleThread: backOnIdleThread, wokenFromCore: wokenFromCore, linger: linger)
                else { break }
            }
            outcome = runSlice(budget: budget)
        }
        runnerToken.store(0, ordering: .relaxed)
        switch outcome {
        case .finished:
            schedulingState.store(.finished, ordering: .releasing)
            return .finished
        case .more:
            schedulingState.store(.scheduled, ordering: .releasing)
            return .reschedule
        case .drained:
            formationPauses = 8
            idleThread = thread
            idleSchedulings = spindle_thread_scheduling_count()
            beforeIdle()
            // The Dekker pair with the producers: they enqueue (a full
            // barrier), then read the state; we store the state, then read
            // the queue. At least one of us sees the other, so an event
            // never waits in the queue of an idle loop.
            schedulingState.store(.idle, ordering: .sequentiallyConsistent)
            // The re-check reads relaxed atomics and liburcu's plain loads:
            // only a full fence keeps them after the store (on x86 the
            // seq_cst store is an xchg and this costs little; on AArch64 a
            // relaxed load could otherwise pass it and lose a wake-up).
            atomicMemoryFence(ordering: .sequentiallyConsistent)
            if hasVisibleWork(), schedulingState.compareExchange(
                expected: .idle, desired: .scheduled, ordering: .sequentiallyConsistent
            ).exchanged {
                return .reschedule
            }
            return .idle
        }
    }

    /// After a slice that drained the loop with more than one event: the
    /// runner keeps up with its producers. Taking the next events at once
    /// would pull the queue's shared lines (a lane's published count and the
    /// slot line being written, the shared queue's tail) from the producers'
    /// cores every few events, and each pull stalls a producer for a
    /// cross-core transfer. So the runner waits without touching shared
    /// memory while a batch of about `formationTarget` events forms (fewer
    /// when the loop's budget is small): the wait, in pauses, doubles while
    /// slices stay under the target, halves while they drain more than twice
    /// it, and starts again short after the loop idles. It never exceeds
    /// `maximumFormationPauses` nor `formationWaitNanoseconds` (the clock is
    /// read every 16 pauses, since a pause lasts from a few to 40 ns across
    /// CPUs), nor `slowStreamWaitNanoseconds` after a slice that drained
    /// under an eighth of the target (a stream too slow for the full wait
    /// to form a batch, whose events it would only delay), and ends when
    /// another loop is queued for the thread (`linger`). True when the
    /// runner sees work. Runner only.
    private func waitForBatch(after reduced: Int, linger: () -> Bool) -> Bool {
        let target = Swift.min(Self.formationTarget, Swift.max(budget / 2, 2))
        if reduced < target {
            formationPauses = Swift.min(formationPauses &* 2, Self.maximumFormationPauses)
        } else if reduced > target &* 2 {
            formationPauses = Swift.max(formationPauses / 2, 16)
        }
        if formationPauses <= 16 {
            for _ in 0..<formationPauses { spindle_cpu_relax() }
        } else {
            let slowStream = reduced < target / 8
            _ = pause(
                atMost: formationPauses,
                nanoseconds: slowStream ? Self.slowStreamWaitNanoseconds : Self.formationWaitNanoseconds,
                linger: linger, until: { false }
            )
        }
        return runnerSeesWork()
    }

    /// After a slice that reduced one event, before the idle transition:
    /// when `linger` allows, and either that transition costs a fence
    /// (`idleCostsFence`; a membarrier interrupts every core running the
    /// process) or the loop came back to a thread that ran no other loop
    /// since it left it idle (`backOnIdleThread`), polls for the loop's next
    /// event for up to `idleWaitNanoseconds`, or until another loop is
    /// queued for the thread. A closed loop (emit, see the state, emit
    /// again) then never goes idle: without the wait each of its events
    /// paid the idle transition, a schedule and a pop (or the fence, over a
    /// lane). The second condition is how such a loop shows itself without
    /// a lane: its producer's emits find it idle, so it never earns one,
    /// and a thread that had nothing else to do meanwhile loses nothing by
    /// waiting; a loop among many busy ones never meets it. A wait that sees
    /// nothing backs off: the next 2, 4, … 64 such transitions go without
    /// one, so a loop fed one event at a time but seldom pays at most one
    /// wait per 64 events.
    ///
    /// No wait when the thread was woken for this scheduling by a wake made
    /// on the core it runs on (`wokenFromCore`): the emitting thread is
    /// then on this core, waiting for it (a producer that emitted and now
    /// waits for the state, most often), and a poll here only keeps it off
    /// the core, while it cannot emit the event the poll waits for. On a
    /// small machine the kernel puts a woken thread on its waker's core
    /// for most sporadic events, so that one wait in 65 would otherwise add
    /// its whole length to one round trip in 65, and more when the poll
    /// loses the core to other work. (The parking policy stops polling for
    /// the same reason: `AdaptiveSpin`.) True when the runner sees work.
    /// Runner only.
    private func waitForNextEvent(backOnIdleThread: Bool, wokenFromCore: Int32, linger: () -> Bool) -> Bool {
        if idleWaitSkips > 0 {
            idleWaitSkips -= 1
            return false
        }
        guard idleCostsFence() || backOnIdleThread, linger() else { return false }
        if wokenFromCore >= 0, wokenFromCore == spindle_current_cpu() {
#if DEBUG
            idleWaitsLeftOutOnWakerCore.wrappingIncrement(ordering: .relaxed)
#endif
            return false
        }
#if DEBUG
        idleWaitsMade.wrappingIncrement(ordering: .relaxed)
#endif
        // Another loop queued for this thread ends the wait: it goes first,
        // and this one pays its idle transition.
        if pause(
            atMost: .max, nanoseconds: Self.idleWaitNanoseconds,
            linger: linger, until: { runnerSeesWork() }
        ) {
            idleWaitMisses = 0
            return true
        }
        idleWaitMisses = Swift.min(idleWaitMisses + 1, 6)
        idleWaitSkips = 1 << idleWaitMisses
        return false
    }

    /// The runner's bounded wait, shared by `waitForBatch` and
    /// `waitForNextEvent`: checks `done`, pauses the CPU, and repeats, for at
    /// most `maximumPauses` pauses and `nanoseconds`, and only while
    /// `linger` allows. The clock and `linger` are read every 16 pauses:
    /// each costs more than a pause, which lasts from a few to 40 ns across
    /// CPUs. True when `done` ended the wait. Runner only.
    @inline(__always)
    private func pause(
        atMost maximumPauses: Int, nanoseconds: UInt64,
        linger: () -> Bool, until done: () -> Bool
    ) -> Bool {
        let start = spindle_monotonic_ns()
        var pauses = 0
        while pauses < maximumPauses {
            if done() { return true }
            spindle_cpu_relax()
            pauses &+= 1
            if pauses & 15 == 0, spindle_monotonic_ns() &- start >= nanoseconds || !linger() { break }
        }
        return false
    }

    /// True when the calling thread is running a slice of this loop.
    @inline(__always)
    final var isOnRunner: Bool {
        runnerToken.load(ordering: .relaxed) == currentThreadToken()
    }
}

/// Something that runs loops: the shared pool, a user's pool, a dedicated
/// thread, a serial dispatch queue.
///
/// `schedule` is called once per `idle → scheduled` edge (and by the
/// executor itself for a reschedule); the executor must eventually call
/// `runScheduling` on a thread of its own, exactly once per `schedule`.
protocol LoopExecutor: AnyObject, Sendable {
    /// Queues `loop` to run. Any thread; never blocks, never runs user code.
    func schedule(_ loop: ScheduledLoop)
    /// Takes a new loop (a dedicated executor starts its thread here).
    /// Throws when it cannot (a pool shut down, a thread refused); the loop
    /// must then not be scheduled.
    func register(_ loop: ScheduledLoop) throws(SpinExecutorError)
    /// A registered loop finished. Called on its last runner.
    func loopFinished(_ loop: ScheduledLoop)
    /// Human-readable, for errors and logs.
    var name: String { get }
    /// An emit found a loop of this executor scheduled and not yet running
    /// (a pool then checks that its searchers are not switched out). Any
    /// thread; never blocks, never runs user code.
    func loopIsWaiting()
    /// Whether an emit on the calling thread may run a loop it just woke
    /// at once, on this thread (the inline fast path): the thread is this
    /// executor's own serial context, and inside no slice. Any thread;
    /// never blocks, never runs user code.
    func runsHere() -> Bool
    /// Whether `runsHere` can ever be true. Immutable.
    var mayRunHere: Bool { get }
}

extension LoopExecutor {
    /// Nothing to check: the executors with a thread (or queue) of their own.
    func loopIsWaiting() {}
    /// Never: every executor but an enqueuing one with a context check
    /// (SpindleNIO's event loop) hands each scheduling to its thread, queue
    /// or actor (see ThreadingModelAndGuarantees.md for why).
    func runsHere() -> Bool { false }
    var mayRunHere: Bool { false }
}
