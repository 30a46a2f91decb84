internal import Atomics
internal import CSpindle

/// One OS thread for one loop: for a hot loop that should not share its
/// thread. The thread spins briefly when the loop goes idle, then parks; it
/// exits after the loop's stop, on its own (nobody joins it, so a stop never
/// blocks an async caller's thread).
final class DedicatedThreadExecutor: LoopExecutor {
    private let parker = Parker()
    /// atomic: set by `schedule`, cleared by the thread when it takes the loop.
    private let ready = UnsafeAtomic<Bool>.create(false)
    private let spinsBeforeParking: Int

    init(spinsBeforeParking: Int) {
        self.spinsBeforeParking = spinsBeforeParking
    }

    deinit { ready.destroy() }

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
        parker.notify()
    }

    private func run(_ loop: ScheduledLoop) {
        while true {
            parker.wait(spins: spinsBeforeParking) { [ready] in ready.load(ordering: .acquiring) }
            guard ready.exchange(false, ordering: .acquiringAndReleasing) else { continue }
            var result = RunResult.reschedule
            // The loop is this thread's alone: a reschedule runs at once,
            // and the runner lingers whenever a batch may be forming.
            while case .reschedule = result {
                result = loop.runScheduling(linger: { true })
            }
            if case .finished = result { return }
        }
    }
}
