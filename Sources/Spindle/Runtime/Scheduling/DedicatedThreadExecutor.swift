internal import Atomics
internal import CSpindle

/// One OS thread for one loop: for a hot loop that should not share its
/// thread. The thread spins briefly when the loop goes idle, then parks; it
/// exits after the loop's stop, on its own (nobody joins it, so a stop never
/// blocks an async caller's thread).
///
/// How long it spins adapts, as a pool thread's budget does
/// (`AdaptiveSpin`): up to `spinsBeforeParking` pauses while the loop's
/// events come back soon after the thread parked, and not at all once its
/// parks run long, or once an event's emit wakes it from the core it
/// parked on (its spinning there only kept the emitter off the core).
final class DedicatedThreadExecutor: LoopExecutor {
    private let parker = Parker()
    /// atomic: set by `schedule`, cleared by the thread when it takes the loop.
    private let ready = UnsafeAtomic<Bool>.create(false)
    /// atomic: the core a `schedule` that found the thread asleep ran on
    /// (-1: none since the thread last went to sleep, or unknown). A hint
    /// for the parking policy (`AdaptiveSpin`), never for the protocol.
    private let wakerCore = UnsafeAtomic<Int32>.create(-1)
    private let spinsBeforeParking: Int

    init(spinsBeforeParking: Int) {
        self.spinsBeforeParking = spinsBeforeParking
    }

    deinit {
        ready.destroy()
        wakerCore.destroy()
    }

    var name: String { "dedicated thread" }

    func loopFinished(_ loop: ScheduledLoop) {}

    /// Starts the thread that runs `loop` (this executor's one loop) until
    /// it finishes. Throws when the system refuses a thread.
    func register(_ loop: ScheduledLoop) throws(SpinExecutorError) {
        LiveCounts.reducerThreads.wrappingIncrement(ordering: .relaxed)
        do {
            try OSThread.spawnDetached(name: "spindle-loop") { [self] in
                defer { LiveCounts.reducerThreads.wrappingDecrement(ordering: .relaxed) }
                run(loop)
            }
        } catch {
            LiveCounts.reducerThreads.wrappingDecrement(ordering: .relaxed)
            throw error
        }
    }

    func schedule(_ loop: ScheduledLoop) {
        ready.store(true, ordering: .sequentiallyConsistent)
        if parker.hasWaiters { wakerCore.store(spindle_current_cpu(), ordering: .relaxed) }
        parker.notify()
    }

    private func run(_ loop: ScheduledLoop) {
        var spin = AdaptiveSpin(
            first: UInt64(Swift.min(256, spinsBeforeParking)), maximum: UInt64(spinsBeforeParking),
            budget: UInt64(spinsBeforeParking))
        while true {
            var parkedAt: UInt64 = 0
            var core: Int32 = -1
            // The core of the wake that ended a sleep (-1: no sleep, or
            // unknown), for the scheduling that follows it.
            var wokenFromCore: Int32 = -1
            parker.wait(spins: Int(spin.budget), beforeSleep: { [wakerCore] in
                wakerCore.store(-1, ordering: .relaxed)
                core = spindle_current_cpu()
                parkedAt = spindle_monotonic_ns()
            }) { [ready] in
                ready.load(ordering: .acquiring)
            }
            if parkedAt != 0 {
                wokenFromCore = wakerCore.load(ordering: .relaxed)
                spin.slept(
                    nanoseconds: spindle_monotonic_ns() &- parkedAt, onCore: core, wokenFromCore: wokenFromCore)
            }
            guard ready.exchange(false, ordering: .acquiringAndReleasing) else { continue }
            var result = RunResult.reschedule
            // The loop is this thread's alone: a reschedule runs at once,
            // and the runner lingers whenever a batch may be forming.
            while case .reschedule = result {
                result = loop.runScheduling(linger: { true }, wokenFromCore: wokenFromCore)
                wokenFromCore = -1
            }
            if case .finished = result { return }
        }
    }
}
