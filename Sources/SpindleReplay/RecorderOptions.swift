/// How a ``SpinRecorder`` hands its lines to the file system, how far it
/// makes them durable, and what happens when the writer falls behind.
///
/// The defaults make a journal that loses nothing the loop reduced while
/// the process lives: every batch is written when it is encoded, and the
/// loop's executor waits for the writer rather than buffer without bound.
/// These options trade some of that for fewer writes and a loop that never
/// waits:
///
/// @Snippet(path: "Spindle/Snippets/SpindleReplay/ReplayJournal", slice: "options")
///
/// > Important: What a flush guarantees: once ``onFlush`` reports reduction
/// > N as `written`, every line up to reduction N has been handed to the
/// > operating system with `write(2)`, so it survives the recording process
/// > being killed (even by `SIGKILL`). It does **not** survive an operating
/// > system crash or a power cut: the page cache may not have reached the
/// > disk. Only `synced` (``Sync/everyFlush``, or ``Sync/atStop`` at the
/// > end) means `fsync(2)` returned, and then the storage device has been
/// > asked to keep the data — as far as the device and file system honour
/// > it.
///
/// **Thread safety:** a value; share it freely. ``onFlush`` and ``onError``
/// are called on the recorder's writer queue, never under its lock.
public struct RecorderOptions: Sendable {
    /// When encoded lines are written to the file system.
    public enum Flush: Sendable, Hashable {
        /// Each reduced batch is written as soon as it is encoded: one
        /// `write(2)` per batch of the loop.
        case everyBatch
        /// Lines collect in the writer's buffer and are written when it holds
        /// `bytes` or more, or `interval` after the oldest line in it was
        /// encoded, whichever comes first. Fewer, larger writes; a kill loses
        /// at most what the buffer held.
        case buffered(bytes: Int, interval: Duration)
    }

    /// Whether the recorder calls `fsync(2)` after writing.
    public enum Sync: Sendable, Hashable {
        /// Never: what is written is in the page cache, safe from a process
        /// crash but not from an operating system crash.
        case never
        /// Once, when the loop has stopped and the footer is written.
        case atStop
        /// After every flush: each watermark reported is on storage. Each
        /// sync waits for the device, so the writer (and, when it falls
        /// behind, the loop) goes at the storage's pace.
        case everyFlush
    }

    /// What the loop does when ``backlogLimit`` reductions are waiting for
    /// the writer (the disk is slower than the loop).
    public enum Backlog: Sendable, Hashable {
        /// The reducer waits for the writer to take a batch. Nothing is
        /// lost, but the loop's executor is blocked meanwhile: a pool thread
        /// (or the loop's dedicated thread or serial queue) serves no loop
        /// until the writer catches up, and `emit` into a bounded `.block`
        /// queue waits too.
        case waitForWriter
        /// The recording stops with ``RecordingError/writerFellBehind(backlogLimit:lastWrittenReduction:)``,
        /// reported once; the loop keeps running, unrecorded, and never waits.
        case stopRecording
    }

    /// When lines are written. Default: ``Flush/everyBatch``.
    public var flush: Flush
    /// When the file is synced to storage. Default: ``Sync/never``. Has no
    /// effect on a recorder made with a writer closure, which owns its
    /// destination.
    public var sync: Sync
    /// How many reductions may wait between the reducer and the writer (copied
    /// events not yet encoded). Default: 65,536. The writer's own buffer adds
    /// at most one batch (``Flush/everyBatch``) or `bytes`
    /// (``Flush/buffered(bytes:interval:)``).
    public var backlogLimit: Int
    /// What happens when the backlog is full. Default: ``Backlog/waitForWriter``.
    public var whenBacklogFull: Backlog
    /// Called after each flush with the new watermark, on the writer queue,
    /// in order. Keep it short: the writer waits for it.
    public var onFlush: (@Sendable (RecordingWatermark) -> Void)?
    /// Called once, on the writer queue, with the error that stopped the
    /// recording; ``SpinRecorder/waitUntilWritten()`` throws the same error.
    public var onError: (@Sendable (RecordingError) -> Void)?

    /// Creates options; every argument has the default described on its
    /// property.
    /// - Parameters:
    ///   - flush: when lines are written.
    ///   - sync: when the file is synced to storage.
    ///   - backlogLimit: how many reductions may wait for the writer (at least 1).
    ///   - whenBacklogFull: what happens when that many wait.
    ///   - onFlush: called after each flush with the new watermark.
    ///   - onError: called once with the error that stopped the recording.
    public init(
        flush: Flush = .everyBatch,
        sync: Sync = .never,
        backlogLimit: Int = 65_536,
        whenBacklogFull: Backlog = .waitForWriter,
        onFlush: (@Sendable (RecordingWatermark) -> Void)? = nil,
        onError: (@Sendable (RecordingError) -> Void)? = nil
    ) {
        self.flush = flush
        self.sync = sync
        self.backlogLimit = backlogLimit
        self.whenBacklogFull = whenBacklogFull
        self.onFlush = onFlush
        self.onError = onError
    }
}

extension RecorderOptions {
    /// Why these options cannot record, or nil when they can: a value a
    /// caller computed is an error the recorder reports, not a crash.
    var invalidity: String? {
        if backlogLimit < 1 { return "backlogLimit must be at least 1 (got \(backlogLimit))" }
        if case .buffered(let bytes, let interval) = flush, bytes < 1 || interval <= .zero {
            return "a buffered flush needs bytes ≥ 1 and an interval > 0 (got \(bytes) bytes, \(interval))"
        }
        return nil
    }

    /// Options that can run, for a recorder whose own options cannot: it
    /// records nothing, but its loop must still run through it.
    var runnable: RecorderOptions {
        var options = self
        options.backlogLimit = Swift.max(1, backlogLimit)
        options.flush = .everyBatch
        return options
    }
}
