internal import Atomics
internal import CSpindle

/// A pool of reducer threads that runs many loops: the default executor.
///
/// Each thread takes a ready loop from the pool's queue, runs it for at most
/// its budget of events (``SpinOptions/maxBatch``), then takes the next; a
/// loop that still has work goes back to the tail of the queue, so a flooded
/// loop cannot starve the others. A loop is never run by two threads at once.
/// Threads spin briefly when there is nothing to run, then sleep: a process
/// whose loops are all idle burns no CPU.
///
/// ``shared`` (one thread per active processor, created on first use) serves
/// every loop that names no other executor. Create your own pool to keep a
/// group of loops apart, and shut it down when done — like swift-nio's
/// `MultiThreadedEventLoopGroup`.
///
/// > Important: Never block a pool thread: reducers and synchronous
/// > feedbacks run on it, and a blocked thread holds up every loop behind it.
/// > Put blocking work in a feedback with `execute(on:)` a dispatch queue.
///
/// **Thread safety:** every member may be used from any thread.
public final class ReducerPool: Sendable, CustomStringConvertible {
    /// The process-wide pool: one thread per active processor, created the
    /// first time a loop starts on it. It is never shut down.
    public static let shared = ReducerPool(sharedWithThreads: ReducerPool.defaultThreadCount)

    /// The pool's name (its threads are named after it).
    public let name: String
    /// How many threads the pool runs.
    public let threadCount: Int

    let core: PoolCore

    /// Creates a pool and starts its threads.
    ///
    /// - Parameters:
    ///   - threads: how many reducer threads (at least 1). Default: one per
    ///     active processor.
    ///   - name: a name for the threads and errors.
    /// - Throws: ``SpinExecutorError/invalidThreadCount(_:)``, or
    ///   ``SpinExecutorError/threadUnavailable(errno:)`` when the system
    ///   refuses a thread (then no thread of the pool is left running).
    public init(threads: Int = ReducerPool.defaultThreadCount, name: String = "spindle-pool") throws(SpinExecutorError) {
        guard threads >= 1 else { throw .invalidThreadCount(threads) }
        self.name = name
        self.threadCount = threads
        core = PoolCore(name: name, threads: threads, isShared: false)
        try core.startThreads()
    }

    private init(sharedWithThreads threads: Int) {
        name = "spindle-shared"
        threadCount = Swift.max(threads, 1)
        core = PoolCore(name: name, threads: threadCount, isShared: true)
    }

    /// One thread per active processor (`sysconf(_SC_NPROCESSORS_ONLN)`), at least 1.
    public static var defaultThreadCount: Int { Int(spindle_active_processors()) }

    public var description: String { "ReducerPool(\(name), \(threadCount) threads)" }

    /// Loops started on the pool and not yet finished. Any thread.
    public var liveLoops: Int { core.liveLoops }

    /// Spare threads running now: started while every thread of the pool
    /// was blocked in a `.block` emit (a feedback emitting into a full
    /// loop, see ``OverflowPolicy/block``), so that the pool's loops still
    /// run. Each leaves after an idle period once no thread is blocked; at
    /// most 32. Any thread.
    public var spareThreads: Int { core.spareThreads }

    /// Stops every loop on the pool with ``StopMode/drain``, waits until each
    /// has finished, then ends the pool's threads. Loops started afterwards
    /// fail with ``SpinExecutorError/poolShutDown(pool:)``. Calling it again
    /// waits for the same shutdown. Never blocks the calling thread.
    ///
    /// - Throws: ``SpinExecutorError/sharedPoolCannotShutDown`` for ``shared``.
    public func shutdown() async throws(SpinExecutorError) {
        if core.isShared { throw .sharedPoolCannotShutDown }
        await core.shutdown()
    }

    /// True once ``shutdown()`` has begun.
    public var isShutDown: Bool { core.isShuttingDown }
}

