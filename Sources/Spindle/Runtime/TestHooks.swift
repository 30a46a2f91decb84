internal import Atomics
internal import CSpindle

// What the tests look at inside the engine, and the hooks they drive it
// with. Internal: the test targets reach them with `@testable import
// Spindle` (debug builds), as swift-nio's tests reach NIOCore's internals;
// no production type exposes them.

extension ReducerPool {
    /// The pool's scheduling words in one line (threads searching, sleeping,
    /// blocked in `.block` emits, spares; the ready queue empty or not), for
    /// a stall's report. A snapshot of racing values.
    var schedulingSnapshot: String { core.schedulingSnapshot }
    /// Holds the next thread that starts looking for work there, counted as
    /// searching, as if the kernel had switched it out, until
    /// `releaseHeldSearcher()`.
    func holdNextSearcher() { core.holdNextSearcher() }
    /// A thread is held by `holdNextSearcher()`.
    var isHoldingSearcher: Bool { core.isHoldingSearcher }
    /// A thread of the pool sleeps.
    var hasSleepingThread: Bool { core.hasSleepingThread }
    /// How many times an emit found a loop queued behind switched-out
    /// searchers and woke a sleeper (the rescue).
    var rescues: Int { core.rescues }
    /// How many times a schedule handed its loop to a sleeping thread in
    /// its slot (the handoff), over the threads running now.
    var handoffs: Int { core.handoffs }
    /// Lets the held thread go on.
    func releaseHeldSearcher() { core.releaseHeldSearcher() }
}

extension SpinLoop {
    /// The `states` subscriptions that still receive states (a cancelled or
    /// dropped sequence must leave). Any thread.
    var stateSubscriberCount: Int { core.stateSubscriberCount }

    /// The loop's scheduling state and whether its queue looks empty, for a
    /// stall's report. A snapshot of racing values.
    var schedulingSnapshot: String {
        "\(core.schedulingState.load(ordering: .sequentiallyConsistent)), queue empty \(core.queueLooksEmpty)"
    }

    /// How many boxes the state snapshot holds (more than two once a publish
    /// found a reader inside the box it meant to reuse). Only once the loop
    /// has stopped.
    var stateBoxCount: Int { core.snapshot.boxCount }

    /// The schedulings emits ran on the loop's own executor, by the direct
    /// path (the loop taken with its queue empty) and by the inline fast
    /// path (after enqueueing): the premise of the stress tests.
    var runsInPlace: (direct: Int, inline: Int) {
        (core.words.directRuns.load(ordering: .relaxed), core.words.inlineRuns.load(ordering: .relaxed))
    }
}

extension SpinStates {
    /// States buffered, not yet taken. Any thread.
    var bufferedCount: Int { handle.subscription.bufferedCount }
}

#if DEBUG
extension SpinLoop {
    /// The runner's waits for the loop's next event before its idle
    /// transitions: made, and left out because the wake that began the
    /// scheduling came from the runner's own core
    /// (`ScheduledLoop.waitForNextEvent`). Any thread.
    var idleWaits: (made: Int, leftOutOnWakerCore: Int) {
        (core.idleWaitsMade.load(ordering: .relaxed), core.idleWaitsLeftOutOnWakerCore.load(ordering: .relaxed))
    }
}

/// A fault a test injects into the engine, for the task that sets it (and
/// the tasks it starts, which inherit task-local values): SpindleTesting's
/// tests change the engine's behaviour this way and show that a spec sees
/// the change. Debug builds only; per task, so a test that injects one
/// leaves the tests running beside it alone.
enum InjectedFault: Sendable {
    case none
    /// A run cancelled by a new state (`.cancelOnNewState`) has its later
    /// events accepted instead of discarded.
    case acceptLateEvents

    @TaskLocal static var current: InjectedFault = .none
}
#endif

extension OSThread {
    /// The calling thread's time slice as the kernel reports it (from Linux
    /// 6.12; 0 before and elsewhere), its scheduling policy and its nice
    /// value (`spindle_thread_slice`).
    static var currentSlice: (nanoseconds: UInt64, policy: Int32, nice: Int32) {
        var policy: Int32 = 0
        var nice: Int32 = 0
        let slice = spindle_thread_slice(&policy, &nice)
        return (slice, policy, nice)
    }
}
