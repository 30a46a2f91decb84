import Dispatch
import Foundation
import Spindle

/// A `SpinObserver` that records every event a loop reduces, in reduction
/// order and with its time, as JSON Lines (see ``SpinRecording`` for the
/// format and for replay): a journal of the run.
///
/// @Snippet(path: "Spindle/Snippets/SpindleReplay/ReplayRecordToFile", slice: "record")
///
/// Then the recording is read back and replayed:
///
/// @Snippet(path: "Spindle/Snippets/SpindleReplay/ReplayRecordToFile", slice: "replay")
///
/// The reducer thread only copies each event and reads the clock; encoding
/// and writing happen on the recorder's own serial queue, a batch at a time.
/// ``RecorderOptions`` chooses when lines are written and synced, how many
/// reductions may wait for the writer, and what happens when that many do;
/// ``watermark`` and ``RecorderOptions/onFlush`` say how far the file has
/// got. A file is written with POSIX calls on its descriptor, so a failure
/// (`ENOSPC`, `EFBIG`, `EIO`) stops the recording with
/// ``RecordingError/fileCallFailed(call:errno:lastWrittenReduction:)``,
/// which names the last reduction in the file; the loop keeps running.
///
/// > Important: What survives a crash: every reduction up to
/// > ``RecordingWatermark/written`` survives the recording process being
/// > killed; only those up to ``RecordingWatermark/synced`` survive an
/// > operating system crash or a power cut (see ``RecorderOptions``). A
/// > recording cut short reads back with ``TornLastLine/drop`` up to its
/// > last complete line. Lines not yet flushed are lost with the process.
///
/// > Important: The writer's backlog is bounded (``RecorderOptions/backlogLimit``).
/// > By default (``RecorderOptions/Backlog/waitForWriter``) a loop faster
/// > than its disk waits for the writer on its executor, which blocks that
/// > executor's thread; ``RecorderOptions/Backlog/stopRecording`` never
/// > blocks and stops the recording instead.
///
/// > Important: One recorder records one loop run. A recorder attached to a
/// > second loop (a spin started twice) stops recording and reports
/// > ``RecordingError/recorderReused``.
///
/// > Important: The recording is complete once the loop has stopped and
/// > ``waitUntilWritten()`` has returned. Events the loop never reduced
/// > (dropped, refused after stop, discarded) are not in it: replay
/// > reproduces the states the loop went through, not the emits.
///
/// **Thread safety:** any thread; the loop calls it from its reducer thread.
/// The writer closure, ``RecorderOptions/onFlush`` and
/// ``RecorderOptions/onError`` run on the recorder's writer queue, one at a
/// time, never under its lock.
public final class SpinRecorder<State: Sendable, Event: Encodable & Sendable>: SpinObserver, Sendable {
    private enum Phase {
        /// No loop has started.
        case idle
        /// A loop runs and its reductions are recorded.
        case recording
        /// The recording stopped early (an error); the loop may still run.
        case halted
        /// The loop stopped.
        case done
    }

    private struct Progress {
        var phase = Phase.idle
        // Reduced in the current batch, not yet handed to the writer queue.
        var pending: [RecordingFormat.Reduction<Event>] = []
        // Handed to the writer queue, not yet encoded and written.
        var backlog = 0
        // The reducer thread waiting for room in the backlog.
        var gate: DispatchSemaphore?
        var backlogWaits = 0
        var startTime = ContinuousClock.now
        var error: RecordingError?
        var watermark: RecordingWatermark?
        var finished = false
        var waiters: [CheckedContinuation<Void, any Error>] = []
    }

    // protected by lock
    private let progress = Lock(Progress())
    /// Encodes and writes, in order.
    private let writerQueue = DispatchQueue(label: "spindle.recorder")
    // writer queue only (it checks)
    private let writer: RecordingWriter
    private let options: RecorderOptions

    /// Records to `file`, created or truncated now, with POSIX calls on its
    /// descriptor.
    /// - Parameters:
    ///   - file: the recording's path.
    ///   - options: when to write and sync, and the backlog's bound and
    ///     policy. The defaults write each batch, never sync, and let the
    ///     loop wait for the writer when 65,536 reductions wait.
    /// - Throws: ``RecordingError/invalidOptions(reason:)`` for options that
    ///   cannot record (a `backlogLimit` below 1, a buffered flush of no
    ///   bytes or no interval), before the file is touched;
    ///   ``RecordingError/writeFailed(reason:)`` when the file cannot be
    ///   opened for writing.
    public convenience init(file: URL, options: RecorderOptions = .init()) throws {
        try self.init(file: file, options: options, calls: .system)
    }

    /// Records to `file` through `calls` (tests inject failures with them).
    package convenience init(file: URL, options: RecorderOptions, calls: RecordingFileCalls) throws {
        if let reason = options.invalidity { throw RecordingError.invalidOptions(reason: reason) }
        let recordingFile = try RecordingFile(path: file.path, calls: calls)
        self.init(destination: .file(recordingFile), options: options)
    }

    /// Records through `write`, called on the recorder's queue with whole
    /// lines, in order (for a network stream, a pipe, or memory in tests).
    /// Each call is a flush; ``RecorderOptions/sync`` has no effect.
    /// - Parameters:
    ///   - write: takes the next lines; an error it throws stops the
    ///     recording with ``RecordingError/writeFailed(reason:)`` (or with
    ///     the error itself, when it is a ``RecordingError``).
    ///   - options: when to write, and the backlog's bound and policy.
    public convenience init(writer write: @escaping @Sendable (Data) throws -> Void, options: RecorderOptions = .init()) {
        self.init(destination: .closure(write: write, close: {}), options: options)
    }

    private init(destination: RecordingWriter.Destination, options: RecorderOptions) {
        let invalidity = options.invalidity
        let options = invalidity == nil ? options : options.runnable
        self.options = options
        self.writer = RecordingWriter(
            queue: writerQueue, destination: destination, flush: options.flush, sync: options.sync)
        // Options a caller computed that cannot record: the recorder records
        // nothing and says so once, and its loop runs as if unrecorded.
        if let invalidity { fail(.invalidOptions(reason: invalidity), onWriterQueue: false) }
    }

    /// How far the recording has been written and synced; nil until the
    /// header is written.
    public var watermark: RecordingWatermark? { progress.withLock { $0.watermark } }

    /// The error that stopped the recording, if one has.
    public var error: RecordingError? { progress.withLock { $0.error } }

    /// How many times the reducer waited for the writer (tests).
    package var backlogWaits: Int { progress.withLock { $0.backlogWaits } }

    /// Waits until the loop has stopped and every line is written (and
    /// synced, if the options ask).
    /// - Throws: the ``RecordingError`` that stopped the recording, the same
    ///   one ``RecorderOptions/onError`` received.
    public func waitUntilWritten() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let outcome: Result<Void, RecordingError>? = progress.withLock { progress in
                guard progress.finished else {
                    progress.waiters.append(continuation)
                    return nil
                }
                return progress.error.map { .failure($0) } ?? .success(())
            }
            if let outcome { continuation.resume(with: outcome) }
        }
    }

    // MARK: SpinObserver (reducer thread)

    public func loopStarted(initialState: State) {
        let first = progress.withLock { progress -> Bool in
            guard progress.phase == .idle else { return false }
            // A recorder that failed before its loop started records nothing.
            progress.phase = progress.error == nil ? .recording : .halted
            progress.startTime = .now
            return true
        }
        guard first else {
            fail(.recorderReused, onWriterQueue: false)
            return
        }
        let header = RecordingFormat.Header(
            format: RecordingFormat.name, version: RecordingFormat.version,
            initialState: (initialState as? any Encodable).map(AnyEncodable.init))
        // Encoded here, once: the state is only known to be Sendable, not
        // its Encodable wrapper.
        let line: Data
        do {
            line = try Self.line(header)
        } catch {
            fail(.writeFailed(reason: "the initial state cannot be encoded: \(error)"), onWriterQueue: false)
            return
        }
        writerQueue.async { [self] in
            guard isWriting else { return }
            act(on: writer.append(line, ends: [.init(end: line.count, reduction: 0)]))
        }
    }

    public func eventReduced(_ event: Event, newState: State, reduction: Int) {
        let now = ContinuousClock.now
        while true {
            let step = progress.withLock { progress in
                admit(event, reduction: reduction, at: now, into: &progress)
            }
            switch step {
            case .admitted:
                return
            case .handedOff(let batch):
                handOff(batch)
                return
            case .haltForBacklog(let batch):
                handOff(batch)
                stopForBacklog()
                return
            case .waitForWriter(let batch, let gate):
                handOff(batch)
                // Not under the lock: the writer takes it to make room.
                gate.wait()
            }
        }
    }

    public func batchReduced(_ batch: ReductionBatch) {
        handOff(takePending())
    }

    public func loopStopped(_ report: StopReport) {
        let batch = takePending()
        let recorded = progress.withLock { progress -> Bool in
            defer { if progress.phase == .recording { progress.phase = .done } }
            return progress.phase == .recording
        }
        handOff(batch)
        let footer = recorded
            ? try? Self.line(RecordingFormat.Footer(stopped: .init(reduced: report.reduced, discarded: report.discarded)))
            : nil
        writerQueue.async { [self] in
            // A recording that stopped early keeps no footer: it ends at its
            // last written reduction, as a cut-short recording.
            let writing = isWriting
            if !writing { writer.discardBuffer() }
            for outcome in writer.finish(footer: writing ? footer : nil) { act(on: outcome) }
            let (waiters, error) = progress.withLock { progress in
                progress.finished = true
                defer { progress.waiters = [] }
                return (progress.waiters, progress.error)
            }
            for waiter in waiters {
                if let error { waiter.resume(throwing: error) } else { waiter.resume() }
            }
        }
    }

    // MARK: The backlog (reducer thread, under the lock)

    private enum Admission {
        case admitted
        case handedOff([RecordingFormat.Reduction<Event>])
        case haltForBacklog([RecordingFormat.Reduction<Event>])
        case waitForWriter([RecordingFormat.Reduction<Event>], DispatchSemaphore)
    }

    /// Copies `event` into the batch if the backlog has room; otherwise
    /// hands the batch over and applies the backlog policy.
    private func admit(
        _ event: Event, reduction: Int, at now: ContinuousClock.Instant, into progress: inout Progress
    ) -> Admission {
        guard progress.phase == .recording else { return .admitted }
        if progress.backlog + progress.pending.count < options.backlogLimit {
            let elapsed = progress.startTime.duration(to: now).components
            let nanoseconds = elapsed.seconds * 1_000_000_000 + elapsed.attoseconds / 1_000_000_000
            progress.pending.append(.init(reduction: reduction, timeNanoseconds: nanoseconds, event: event))
            return .admitted
        }
        // Full: hand over what waits, so the writer can make room.
        let batch = progress.pending
        progress.pending.removeAll(keepingCapacity: true)
        progress.backlog += batch.count
        switch options.whenBacklogFull {
        case .stopRecording:
            progress.phase = .halted
            return .haltForBacklog(batch)
        case .waitForWriter:
            let gate = DispatchSemaphore(value: 0)
            progress.gate = gate
            progress.backlogWaits += 1
            return .waitForWriter(batch, gate)
        }
    }

    private func takePending() -> [RecordingFormat.Reduction<Event>] {
        progress.withLock { progress in
            defer { progress.pending.removeAll(keepingCapacity: true) }
            let batch = progress.pending
            progress.backlog += batch.count
            return batch
        }
    }

    // MARK: Writing (the writer queue)

    /// Encodes and writes `batch`, already counted in the backlog.
    private func handOff(_ batch: [RecordingFormat.Reduction<Event>]) {
        guard !batch.isEmpty else { return }
        writerQueue.async { [self] in
            defer { release(batch.count) }
            guard isWriting else { return }
            let encoder = Self.encoder()
            var data = Data()
            var ends: [RecordingWriter.LineEnd] = []
            ends.reserveCapacity(batch.count)
            for entry in batch {
                do {
                    data.append(try Self.line(entry, encoder))
                } catch {
                    fail(.writeFailed(reason: "reduction \(entry.reduction) cannot be encoded: \(error)"), onWriterQueue: true)
                    return
                }
                ends.append(.init(end: data.count, reduction: entry.reduction))
            }
            act(on: writer.append(data, ends: ends))
        }
    }

    /// Makes room in the backlog, and lets a waiting reducer go on.
    private func release(_ count: Int) {
        let gate = progress.withLock { progress -> DispatchSemaphore? in
            progress.backlog -= count
            guard progress.backlog < options.backlogLimit else { return nil }
            defer { progress.gate = nil }
            return progress.gate
        }
        gate?.signal()
    }

    /// Writes what was handed over before the backlog filled, then stops the
    /// recording, naming the last reduction written.
    private func stopForBacklog() {
        writerQueue.async { [self] in
            guard isWriting else { return }
            act(on: writer.flushNow())
            fail(.writerFellBehind(backlogLimit: options.backlogLimit, lastWrittenReduction: writer.lastWritten),
                 onWriterQueue: true)
        }
    }

    private var isWriting: Bool { progress.withLock { $0.error == nil } }

    private func act(on outcome: RecordingWriter.Outcome) {
        switch outcome {
        case .buffered:
            break
        case .flushLater(let delay, let generation):
            let (seconds, attoseconds) = delay.components
            let nanoseconds = Int(clamping: seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
            writerQueue.asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) { [self] in
                act(on: writer.flushIfDue(generation: generation))
            }
        case .flushed(let watermark):
            progress.withLock { $0.watermark = watermark }
            options.onFlush?(watermark)
        case .failed(let error):
            writer.discardBuffer()
            // Lines a failed write completed are in the file: say so, without
            // a flush report.
            let watermark = writer.watermark
            progress.withLock { $0.watermark = watermark }
            fail(error, onWriterQueue: true)
        }
    }

    /// Stops the recording with `error` unless an earlier error did, and
    /// reports it once to ``RecorderOptions/onError`` on the writer queue.
    private func fail(_ error: RecordingError, onWriterQueue: Bool) {
        let (first, gate) = progress.withLock { progress -> (Bool, DispatchSemaphore?) in
            guard progress.error == nil else { return (false, nil) }
            progress.error = error
            if progress.phase == .recording { progress.phase = .halted }
            defer { progress.gate = nil }
            return (true, progress.gate)
        }
        // A reducer waiting for room goes on: nothing more will be written.
        gate?.signal()
        guard first, let onError = options.onError else { return }
        if onWriterQueue { onError(error) } else { writerQueue.async { onError(error) } }
    }

    private static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    private static func line(_ value: some Encodable, _ encoder: JSONEncoder = encoder()) throws -> Data {
        var data = try encoder.encode(value)
        data.append(0x0A)
        return data
    }
}

/// An `Encodable` of a type known only at run time (the initial state, when
/// the recorder's `State` is not statically `Encodable`).
private struct AnyEncodable: Encodable {
    let value: any Encodable
    func encode(to encoder: any Encoder) throws { try value.encode(to: encoder) }
}
