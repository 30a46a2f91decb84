import Foundation

/// The writer side of a ``SpinRecorder``: the buffer of encoded lines, the
/// flush and sync policies, the destination, and the watermark.
///
/// It never calls out: each operation returns an ``Outcome`` that the
/// recorder acts on (reporting a watermark, scheduling a timed flush,
/// stopping the recording), so no user code runs from in here.
///
/// Thread safety: none; its recorder's writer queue only (checked at every
/// door).
final class RecordingWriter: @unchecked Sendable {
    // @unchecked: every mutable property is touched on `queue` only, and each
    // method checks that it runs there (`dispatchPrecondition`); the recorder
    // reaches it only through closures it dispatches to that queue.

    /// Where the bytes go.
    enum Destination {
        case file(RecordingFile)
        case closure(write: @Sendable (Data) throws -> Void, close: @Sendable () throws -> Void)
    }

    /// What an operation asks the recorder to do.
    enum Outcome {
        /// Nothing: the lines wait in the buffer.
        case buffered
        /// Call ``flushIfDue(generation:)`` with `generation` after `delay`.
        case flushLater(delay: Duration, generation: Int)
        /// The buffer was written (and synced, if asked): report the watermark.
        case flushed(RecordingWatermark)
        /// The recording must stop with this error.
        case failed(RecordingError)
    }

    /// One encoded line's end in the buffer and the reduction it completes
    /// (0 for the header; the last reduction for the footer).
    struct LineEnd {
        let end: Int
        let reduction: Int
    }

    private let queue: DispatchQueue
    private let destination: Destination
    private let flushPolicy: RecorderOptions.Flush
    private let syncPolicy: RecorderOptions.Sync

    // writer queue only
    private var buffer = Data()
    // writer queue only: one per line in `buffer`, in order
    private var lineEnds: [LineEnd] = []
    // writer queue only: bytes of the file, all complete lines
    private var fileLength = 0
    // writer queue only: nil until the header is written
    private var written: Int?
    // writer queue only
    private var synced: Int?
    // writer queue only: a timed flush for an older generation is stale
    private var generation = 0
    // writer queue only
    private var closed = false

    init(queue: DispatchQueue, destination: Destination, flush: RecorderOptions.Flush, sync: RecorderOptions.Sync) {
        self.queue = queue
        self.destination = destination
        self.flushPolicy = flush
        self.syncPolicy = sync
    }

    /// Adds encoded lines, and writes them if the flush policy says so.
    /// - Parameter ends: each line's end in `lines`, with its reduction.
    func append(_ lines: Data, ends: [LineEnd]) -> Outcome {
        dispatchPrecondition(condition: .onQueue(queue))
        let wasEmpty = buffer.isEmpty
        let base = buffer.count
        buffer.append(lines)
        lineEnds.append(contentsOf: ends.map { LineEnd(end: base + $0.end, reduction: $0.reduction) })
        switch flushPolicy {
        case .everyBatch:
            return flush(syncing: syncPolicy == .everyFlush)
        case .buffered(let bytes, let interval):
            if buffer.count >= bytes { return flush(syncing: syncPolicy == .everyFlush) }
            return wasEmpty ? .flushLater(delay: interval, generation: generation) : .buffered
        }
    }

    /// The timed flush of a buffered policy: writes the buffer unless a
    /// flush since `generation` already did.
    func flushIfDue(generation due: Int) -> Outcome {
        dispatchPrecondition(condition: .onQueue(queue))
        guard due == generation, !buffer.isEmpty, !closed else { return .buffered }
        return flush(syncing: syncPolicy == .everyFlush)
    }

    /// Writes what the buffer holds now (the backlog's stop point).
    func flushNow() -> Outcome {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !buffer.isEmpty, !closed else { return .buffered }
        return flush(syncing: syncPolicy == .everyFlush)
    }

    /// How far the destination has got, after a failure too.
    var watermark: RecordingWatermark? {
        dispatchPrecondition(condition: .onQueue(queue))
        return written.map { RecordingWatermark(written: $0, synced: synced) }
    }

    /// The last reduction whose line is in the destination (0: none).
    var lastWritten: Int {
        dispatchPrecondition(condition: .onQueue(queue))
        return written ?? 0
    }

    /// Drops what the buffer holds: the recording stopped before it.
    func discardBuffer() {
        dispatchPrecondition(condition: .onQueue(queue))
        buffer.removeAll()
        lineEnds.removeAll()
        generation += 1
    }

    /// Writes `footer` (if any) and what is buffered, syncs if the policy
    /// asks, and closes the destination. Idempotent.
    /// - Returns: the flush's outcome, then the close's failure if any.
    func finish(footer: Data?) -> [Outcome] {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !closed else { return [] }
        var outcomes: [Outcome] = []
        if let footer {
            buffer.append(footer)
            lineEnds.append(LineEnd(end: buffer.count, reduction: lineEnds.last?.reduction ?? written ?? 0))
        }
        if !buffer.isEmpty || (footer != nil && syncPolicy != .never) {
            outcomes.append(flush(syncing: syncPolicy != .never))
        }
        closed = true
        do {
            switch destination {
            case .file(let file):
                do throws(RecordingFile.Failure) {
                    try file.close()
                } catch {
                    outcomes.append(.failed(.fileCallFailed(call: error.call, errno: error.errno, lastWrittenReduction: lastWritten)))
                }
            case .closure(_, let close):
                try close()
            }
        } catch {
            outcomes.append(.failed(.writeFailed(reason: String(describing: error))))
        }
        return outcomes
    }

    private func flush(syncing: Bool) -> Outcome {
        generation += 1
        if !buffer.isEmpty {
            defer {
                buffer.removeAll(keepingCapacity: buffer.count <= 1 << 20)
                lineEnds.removeAll(keepingCapacity: true)
            }
            switch destination {
            case .file(let file):
                do throws(RecordingFile.Failure) {
                    try file.write(buffer)
                } catch {
                    // The lines wholly written stay; a torn one is cut off
                    // when the system allows, so the file reads back clean.
                    let complete = lineEnds.last { $0.end <= error.bytesWritten }
                    file.truncate(to: fileLength + (complete?.end ?? 0))
                    if let complete { written = complete.reduction }
                    return .failed(.fileCallFailed(call: error.call, errno: error.errno, lastWrittenReduction: lastWritten))
                }
            case .closure(let write, _):
                do {
                    try write(buffer)
                } catch let error as RecordingError {
                    return .failed(error)
                } catch {
                    return .failed(.writeFailed(reason: String(describing: error)))
                }
            }
            fileLength += buffer.count
            written = lineEnds.last?.reduction ?? written
        }
        if syncing, case .file(let file) = destination {
            do throws(RecordingFile.Failure) {
                try file.sync()
                synced = written
            } catch {
                return .failed(.fileCallFailed(call: error.call, errno: error.errno, lastWrittenReduction: lastWritten))
            }
        }
        return .flushed(RecordingWatermark(written: lastWritten, synced: synced))
    }
}
