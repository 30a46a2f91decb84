internal import Atomics
internal import CSpindle

/// Process-wide counts of the objects Spindle's engine keeps alive, for
/// leak checks in tests and soak runs. SPI: `@_spi(Testing) import Spindle`.
///
/// Every running or stopped-but-referenced loop holds one ``loops`` entry,
/// one reducer thread until its thread function returns, one feedback worker
/// per feedback, and one event queue (C memory) until the loop is freed.
/// Each async effect run holds one ``effectTasks`` entry until its task's
/// body returns. After every loop is stopped and released, and every effect
/// has finished, all counts return to zero. A loop whose reducer has
/// effects holds one ``effectRouters`` entry until it is freed and its last
/// handler has returned. Each ``SpinLoop/states`` sequence holds one
/// ``stateSubscriptions`` entry until the loop has stopped or the sequence
/// and its iterators are gone, whichever is later (a sequence gone while
/// its loop runs: until the loop's next state, or its stop).
///
/// Thread safety: `current` may be read from any thread; the counts are
/// taken one by one (relaxed), so a snapshot taken while loops start or
/// stop may mix moments.
@_spi(Testing) public struct SpindleLiveObjects: Sendable, Hashable, CustomStringConvertible {
    /// Loop engines (`SpinLoop`'s core) not yet deinitialized.
    public let loops: Int
    /// Reducer threads whose thread function has not returned.
    public let reducerThreads: Int
    /// Feedback workers not yet deinitialized.
    public let feedbackWorkers: Int
    /// Async effect runs whose task body has not returned.
    public let effectTasks: Int
    /// C event queues (every loop's, bounded or not) not destroyed.
    public let eventQueues: Int
    /// Effect-router runtimes (one per loop of a spin whose reducer has
    /// effects) not yet deinitialized.
    public let effectRouters: Int
    /// `states` subscriptions (their buffers) not yet deinitialized.
    public let stateSubscriptions: Int

    /// The counts now.
    public static var current: SpindleLiveObjects {
        SpindleLiveObjects(
            loops: LiveCounts.loops.load(ordering: .relaxed),
            reducerThreads: LiveCounts.reducerThreads.load(ordering: .relaxed),
            feedbackWorkers: LiveCounts.feedbackWorkers.load(ordering: .relaxed),
            effectTasks: LiveCounts.effectTasks.load(ordering: .relaxed),
            eventQueues: Int(spindle_live_queues()),
            effectRouters: LiveCounts.effectRouters.load(ordering: .relaxed),
            stateSubscriptions: LiveCounts.stateSubscriptions.load(ordering: .relaxed))
    }

    /// True when every count is zero.
    public var isEmpty: Bool {
        loops == 0 && reducerThreads == 0 && feedbackWorkers == 0 && effectTasks == 0
            && eventQueues == 0 && effectRouters == 0 && stateSubscriptions == 0
    }

    public var description: String {
        "loops \(loops), reducer threads \(reducerThreads), feedback workers \(feedbackWorkers), "
            + "effect tasks \(effectTasks), event queues \(eventQueues), effect routers \(effectRouters), "
            + "state subscriptions \(stateSubscriptions)"
    }
}

/// The Swift-side live-object counters behind ``SpindleLiveObjects``.
/// Incremented when an object is created, decremented when it ends; off the
/// per-event path.
enum LiveCounts {
    static let loops = ManagedAtomic<Int>(0)
    static let reducerThreads = ManagedAtomic<Int>(0)
    static let feedbackWorkers = ManagedAtomic<Int>(0)
    static let effectTasks = ManagedAtomic<Int>(0)
    static let effectRouters = ManagedAtomic<Int>(0)
    static let stateSubscriptions = ManagedAtomic<Int>(0)
}
