import Dispatch

/// Where a loop's reducer and its queue-less feedbacks run.
///
/// - ``sharedPool`` (the default): ``ReducerPool/shared``, a few threads that
///   run every loop of the process in turn. Right for almost everything,
///   from one loop to a million.
/// - ``pool(_:)``: a ``ReducerPool`` you created (and shut down).
/// - ``dedicatedThread``: one OS thread for this loop alone, for one hot
///   loop that should never wait behind others. Each costs a thread: use it
///   for a few loops, not thousands.
/// - ``queue(_:)``: a serial `DispatchQueue`, e.g. `.main` for a UI loop
///   (Spin.Swift's `executeOn:`): one work item per scheduling, never one
///   per event.
/// - ``actor(_:)``, ``mainActor``, ``serialExecutor(_:)``: isolated to an
///   actor, or on any Swift `SerialExecutor` (an event loop's, a custom
///   one's): one job per scheduling, serialized with the actor's other work.
///
/// > Important: Never block a loop's executor: its reducer and feedbacks
/// > share it with other loops (on a pool) or with the rest of the app (on
/// > the main queue). Put blocking work in a feedback with
/// > ``Feedback/execute(on:)``.
public struct SpinExecutor: Sendable, CustomStringConvertible {
    enum Kind: Sendable {
        case pool(ReducerPool)
        case dedicatedThread
        case queue(DispatchQueue)
        case actor(any Actor, name: String)
        /// One executor object for every loop started with this value: it
        /// holds nothing of a loop's (SpindleNIO starts a loop per
        /// connection on one value per event loop).
        case enqueuing(EnqueuingExecutor)
    }

    let kind: Kind

    init(kind: Kind) {
        self.kind = kind
    }

    /// The process-wide ``ReducerPool/shared`` pool. The default.
    public static var sharedPool: SpinExecutor { SpinExecutor(kind: .pool(.shared)) }

    /// A pool you created with ``ReducerPool/init(threads:name:)``.
    public static func pool(_ pool: ReducerPool) -> SpinExecutor { SpinExecutor(kind: .pool(pool)) }

    /// A thread of the loop's own, created at start and ended by the stop.
    public static var dedicatedThread: SpinExecutor { SpinExecutor(kind: .dedicatedThread) }

    /// A serial dispatch queue (e.g. `.main`): the loop's slices run as work
    /// items on it.
    /// - Precondition: `queue` is serial; its other work and the loop's
    ///   slices are then serialized too.
    public static func queue(_ queue: DispatchQueue) -> SpinExecutor { SpinExecutor(kind: .queue(queue)) }

    /// The main queue: ``queue(_:)`` with `DispatchQueue.main`.
    public static var main: SpinExecutor { .queue(.main) }

    /// Isolated to `actor`: each scheduling of the loop is one job on the
    /// actor, so the reducer and the queue-less sync feedbacks run
    /// serialized with the actor's other work, and may call
    /// `actor.assumeIsolated`. On the actor's executor when it has one of
    /// its own (the main actor; an actor whose `unownedExecutor` is an event
    /// loop's); a default actor's jobs run on Swift's cooperative pool.
    ///
    /// Async effects that name no queue run on the cooperative pool, not on
    /// the actor (see <doc:ThreadingModelAndGuarantees>).
    public static func actor(_ actor: some Actor) -> SpinExecutor {
        SpinExecutor(kind: .actor(actor, name: "actor '\(type(of: actor))'"))
    }

    /// Each scheduling handed to `enqueue` as a closure that it runs later,
    /// once, on a serial context (SpindleNIO: an event loop's `execute`).
    /// `enqueue` must never run the closure before it returns. With
    /// `isCurrent` (true on that context), an emit made there outside every
    /// slice runs the loop at once instead (the inline fast path).
    @usableFromInline
    package static func enqueuing(
        name: String, isCurrent: (@Sendable () -> Bool)? = nil,
        _ enqueue: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void
    ) -> SpinExecutor {
        SpinExecutor(kind: .enqueuing(EnqueuingExecutor(name: name, isCurrent: isCurrent, enqueue: enqueue)))
    }

    /// SpindleTesting's runner: a loop driven by hand (see ``ManualDrive``),
    /// each scheduling handed to `enqueue` as for
    /// ``enqueuing(name:isCurrent:_:)``, never run in an emit.
    package static func manual(
        name: String, drive: ManualDrive,
        enqueue: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void
    ) -> SpinExecutor {
        SpinExecutor(kind: .enqueuing(EnqueuingExecutor(name: name, isCurrent: nil, manualDrive: drive, enqueue: enqueue)))
    }

    /// The manual drive of a ``manual(name:drive:enqueue:)`` value; nil
    /// for every other executor.
    var manualDrive: ManualDrive? {
        if case .enqueuing(let executor) = kind { executor.manualDrive } else { nil }
    }

    /// The executor object an ``enqueuing(name:isCurrent:_:)`` value holds
    /// (nil for the other kinds), for a cache that must not keep it alive:
    /// SpindleNIO keeps its event loops' executors weakly, so that no
    /// thread-local value owns an event loop (one released as its thread
    /// exits would run NIO and Dispatch teardown inside the thread's
    /// key destructors).
    package var enqueuingObject: AnyObject? {
        if case .enqueuing(let executor) = kind { executor } else { nil }
    }

    /// The ``enqueuing(name:isCurrent:_:)`` value that holds `object`
    /// (from ``enqueuingObject``), or nil.
    package init?(enqueuingObject object: AnyObject) {
        guard let executor = object as? EnqueuingExecutor else { return nil }
        self.init(kind: .enqueuing(executor))
    }

    /// Isolated to the main actor: ``actor(_:)`` with `MainActor.shared`.
    /// Unlike ``main`` (the main dispatch queue), a sync feedback may call
    /// `MainActor.assumeIsolated` in a slice.
    public static var mainActor: SpinExecutor {
        SpinExecutor(kind: .actor(MainActor.shared, name: "main actor"))
    }

    /// On `executor`, any Swift `SerialExecutor` (a swift-nio event loop's
    /// `executor`, an executor of your own): the loop runs isolated to an
    /// actor whose jobs run on `executor`, as ``actor(_:)``.
    public static func serialExecutor(_ executor: any SerialExecutor) -> SpinExecutor {
        SpinExecutor(kind: .actor(
            SerialExecutorActor(executor: executor), name: "serial executor '\(type(of: executor))'"))
    }

    public var description: String {
        switch kind {
        case .pool(let pool): pool === ReducerPool.shared ? "shared pool" : "pool '\(pool.name)'"
        case .dedicatedThread: "dedicated thread"
        case .queue(let queue): "queue '\(queue.label)'"
        case .actor(_, let name): name
        case .enqueuing(let executor): executor.name
        }
    }

    /// The serial queue of ``queue(_:)``; nil for every other executor.
    var serialQueue: DispatchQueue? {
        if case .queue(let queue) = kind { queue } else { nil }
    }

    /// An executor handle for one loop (the pool's own, an enqueuing
    /// value's own, or a new dedicated thread's, queue's or actor's).
    /// Nothing is started yet.
    func makeExecutor(spinsBeforeParking: Int) -> any LoopExecutor {
        switch kind {
        case .pool(let pool): pool.core
        case .dedicatedThread: DedicatedThreadExecutor(spinsBeforeParking: spinsBeforeParking)
        case .queue(let queue): QueueExecutor(queue: queue)
        case .actor(let actor, let name): ActorExecutor(actor: actor, name: name)
        case .enqueuing(let executor): executor
        }
    }
}
