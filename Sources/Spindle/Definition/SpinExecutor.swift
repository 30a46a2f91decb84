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
///   (Spin's `executeOn:`): one work item per scheduling, never one per event.
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
    }

    let kind: Kind

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

    public var description: String {
        switch kind {
        case .pool(let pool): pool === ReducerPool.shared ? "shared pool" : "pool '\(pool.name)'"
        case .dedicatedThread: "dedicated thread"
        case .queue(let queue): "queue '\(queue.label)'"
        }
    }

    /// A new executor handle for one loop (the pool's own, or a new
    /// dedicated thread's or queue's). Nothing is started yet.
    func makeExecutor(spinsBeforeParking: Int) -> any LoopExecutor {
        switch kind {
        case .pool(let pool): pool.core
        case .dedicatedThread: DedicatedThreadExecutor(spinsBeforeParking: spinsBeforeParking)
        case .queue(let queue): QueueExecutor(queue: queue)
        }
    }
}
