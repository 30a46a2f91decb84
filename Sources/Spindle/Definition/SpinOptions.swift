import Logging

/// What a full bounded queue does with a new event.
public enum OverflowPolicy: Sendable, Hashable {
    /// The producer waits for space (spinning briefly, then sleeping). An
    /// emit from the loop's own reducer thread never waits: it goes to the
    /// reducer's local queue, so it cannot deadlock.
    ///
    /// A feedback on a pool (the default placement) that emits into
    /// *another* loop's full `.block` queue waits on a pool thread; when the
    /// last free thread of the pool blocks so, the pool starts a spare
    /// thread to run its loops meanwhile, so the loop being waited for still
    /// runs. Waits that form a cycle (two loops' feedbacks each waiting for
    /// the other's space) deadlock, as on any executor.
    case block
    /// The new event is refused: `emit` returns ``EmitResult/dropped`` and
    /// the loop counts it.
    case dropNewest
}

/// Which event queue a loop runs on.
public enum QueueKind: Sendable, Hashable {
    /// Unbounded, lock-free: liburcu's wait-free concurrent queue with pooled
    /// nodes. The default.
    case lockFree
    /// Bounded: at most `capacity` accepted events wait (the one being
    /// reduced is not waiting), and a full queue applies the overflow
    /// policy. `capacity` is rounded up to a power of two; it must be
    /// 1…2^30, or the loop does not start
    /// (``SpinExecutorError/invalidOptions(reason:)``).
    ///
    /// It runs on the default queue's machinery, at about its speed: from a
    /// capacity of 1,024, up to 8 producer threads that stream into the
    /// loop get a lane each with a share of their own (a sixteenth of the
    /// capacity, at most 4,096 events), and the rest of the capacity is the
    /// shared queue's, for every other producer. A producer whose share is
    /// full waits (``OverflowPolicy/block``) or is refused
    /// (``OverflowPolicy/dropNewest``) even while another share has room;
    /// an event on a lane counts until the run of the lane's events that
    /// reduces it ends.
    case bounded(capacity: Int, overflow: OverflowPolicy)
    /// A queue made outside the engine (``CustomEventQueue``), one per loop:
    /// the benchmark harness's pure-Swift yardstick, and tests. Not a
    /// supported choice for applications (hence the SPI). A factory whose
    /// queues hold another event type than the loop's is an invalid option:
    /// the loop does not start (``SpinExecutorError/invalidOptions(reason:)``).
    @_spi(Benchmarks) case custom(CustomEventQueueFactory)
}

/// An error thrown by a feedback's effect, or reported by the spin's effect
/// router, as reported to ``SpinOptions/onEffectError``.
public struct EffectError: Error, Sendable {
    /// The position of the feedback in its spin (0-based, in declaration
    /// order). For an error of the effect router, `spin.feedbacks.count`
    /// (the router is no feedback of the spin): read ``router`` instead.
    public let feedbackIndex: Int
    /// For an error of the spin's effect router (an
    /// ``UnhandledEffectError``, ``AmbiguousEffectRouteError`` or
    /// ``EffectHandlerError``), the router's ``EffectRouter/name``; nil for a
    /// feedback's error.
    public let router: String?
    /// What the effect threw.
    public let underlying: any Error

    init(feedbackIndex: Int, router: String? = nil, underlying: any Error) {
        self.feedbackIndex = feedbackIndex
        self.router = router
        self.underlying = underlying
    }
}

/// How a spin's loop runs: its executor, its queue, its error hook, its tuning.
public struct SpinOptions: Sendable {
    /// Where the loop runs: the one place it is chosen. nil (the default):
    /// ``SpinExecutor/sharedPool``.
    public var executor: SpinExecutor?
    /// The event queue. Default: ``QueueKind/lockFree``.
    public var queue: QueueKind
    /// Called (on the effect's thread) when an effect throws. The loop keeps
    /// running. Default: log the error with ``logger`` at `.error`.
    public var onEffectError: (@Sendable (EffectError) -> Void)?
    /// The logger for the loop's own diagnostics. Default: a logger labelled
    /// "spindle", made from the logging system's factory when the loop first
    /// logs (never when options are built: a `SpinOptions` costs no logger,
    /// so per-connection options need not be cached).
    public var logger: Logger {
        get { customLogger ?? Logger(label: "spindle") }
        set { customLogger = newValue }
    }
    /// The logger given, if any.
    private var customLogger: Logger?
    /// The most events a loop reduces in one slice before it publishes the
    /// state and delivers the batch to queued feedbacks; on a pool, the loop
    /// then yields its thread if other loops are waiting (fairness).
    /// Default: 1024. Below 1, the loop does not start
    /// (``SpinExecutorError/invalidOptions(reason:)``).
    public var maxBatch: Int
    /// The most CPU pauses (tens of nanoseconds each) a dedicated thread
    /// spends polling for work once its loop is idle, before it sleeps: it
    /// polls that long while its loop's events come back soon after it
    /// slept, less and then not at all once its sleeps run long. Higher:
    /// lower wake-up latency for a busy loop, more CPU burnt while idle.
    /// Default: 2000.
    ///
    /// A tuning knob counted in CPU pauses, whose meaning depends on the
    /// processor: SPI (`@_spi(Tuning) import Spindle`) for the benchmark
    /// harness and tests, not part of the supported API.
    @_spi(Tuning) public var spinsBeforeParking: Int = 2000

    /// Creates options. Every parameter has the default its property
    /// documents; `logger: nil` is the default logger.
    public init(
        executor: SpinExecutor? = nil,
        queue: QueueKind = .lockFree,
        onEffectError: (@Sendable (EffectError) -> Void)? = nil,
        logger: Logger? = nil,
        maxBatch: Int = 1024
    ) {
        self.executor = executor
        self.queue = queue
        self.onEffectError = onEffectError
        self.customLogger = logger
        self.maxBatch = maxBatch
    }
}

extension SpinOptions {
    /// The largest bounded queue (2^30 events).
    static let maximumBoundedCapacity = 1 << 30

    /// Why these options cannot run a loop, or nil when they can. Checked
    /// at start, so that a value a caller computed (a capacity of 0, a
    /// `maxBatch` of 0) is a start error, not a crash.
    func invalidity<Event>(for eventType: Event.Type) -> String? {
        if maxBatch < 1 { return "maxBatch must be at least 1 (got \(maxBatch))" }
        switch queue {
        case .bounded(let capacity, _) where !(1...Self.maximumBoundedCapacity).contains(capacity):
            return "a bounded queue's capacity must be 1…\(Self.maximumBoundedCapacity) (got \(capacity))"
        case .custom(let factory):
            return factory.invalidity(for: eventType)
        case .lockFree, .bounded:
            return nil
        }
    }

    /// These options with a queue and budget any loop can be built with,
    /// for a loop whose own options are invalid and that will never run.
    var buildable: SpinOptions {
        var options = self
        options.queue = .lockFree
        options.maxBatch = 1
        return options
    }
}

/// How ``SpinLoop/stop(_:)`` treats events accepted but not yet reduced.
public enum StopMode: Sendable, Hashable {
    /// Reduce everything accepted before the stop. The default.
    case drain
    /// Throw pending events away, and report how many. Deliveries end at
    /// once: from the request on, no state reaches a feedback (an effect
    /// call already in progress finishes), even a state the slice in
    /// progress reduces; `states` subscribers still get the final state.
    case discardPending
}

/// What a stop did.
public struct StopReport: Sendable, Hashable {
    /// Events reduced over the loop's whole life.
    public let reduced: Int
    /// Events accepted but thrown away by ``StopMode/discardPending``.
    public let discarded: Int

    /// Creates a report (for comparisons in tests).
    public init(reduced: Int, discarded: Int) {
        self.reduced = reduced
        self.discarded = discarded
    }
}
