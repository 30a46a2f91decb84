import Dispatch
import Foundation
import Spindle

/// A ``SpinObserver`` that records every event a loop reduces, in reduction
/// order and with its time, as JSON Lines (see ``SpinRecording`` for the
/// format and for replay).
///
/// ```swift
/// let recorder = try SpinRecorder<Levels, Levels.Event>(file: url)
/// let loop = spin.observed(by: recorder).start()
/// …
/// await loop.stop()
/// try await recorder.waitUntilWritten()
/// let states = try SpinRecording<Levels.Event>(contentsOf: url).replay(spin)
/// ```
///
/// The reducer thread only copies each event and reads the clock; encoding
/// and writing happen on the recorder's own serial queue, a batch at a time.
///
/// > Important: One recorder records one loop run. A recorder attached to a
/// > second loop (a spin started twice) ignores it and reports
/// > ``RecordingError/recorderReused`` from ``waitUntilWritten()``.
///
/// > Important: The recording is complete once the loop has stopped and
/// > ``waitUntilWritten()`` has returned. Events the loop never reduced
/// > (dropped, refused after stop, discarded) are not in it: replay
/// > reproduces the states the loop went through, not the emits.
///
/// **Thread safety:** any thread; the loop calls it from its reducer thread.
public final class SpinRecorder<State: Sendable, Event: Encodable & Sendable>: SpinObserver, Sendable {
    private struct Progress {
        var started = false
        var pending: [RecordingFormat.Reduction<Event>] = []
        var startTime = ContinuousClock.now
        var error: RecordingError?
        var finished = false
        var waiters: [CheckedContinuation<Void, any Error>] = []
    }

    // protected by lock
    private let progress = Lock(Progress())
    /// Encodes and writes, in order. Its closures own `write`.
    private let writer = DispatchQueue(label: "spindle.recorder")
    private let write: @Sendable (Data) throws -> Void
    private let close: @Sendable () throws -> Void

    /// Records to `file`, created or truncated now.
    /// - Throws: ``RecordingError/writeFailed(reason:)`` when the file cannot
    ///   be opened for writing.
    public convenience init(file: URL) throws {
        guard FileManager.default.createFile(atPath: file.path, contents: nil),
              let handle = try? FileHandle(forWritingTo: file) else {
            throw RecordingError.writeFailed(reason: "cannot open \(file.path) for writing")
        }
        self.init(write: { data in try handle.write(contentsOf: data) }, close: { try handle.close() })
    }

    /// Records through `write`, called on the recorder's queue with whole
    /// lines, in order (for a network stream, a pipe, or memory in tests).
    public convenience init(writer write: @escaping @Sendable (Data) throws -> Void) {
        self.init(write: write, close: {})
    }

    private init(write: @escaping @Sendable (Data) throws -> Void, close: @escaping @Sendable () throws -> Void) {
        self.write = write
        self.close = close
    }

    /// Waits until the loop has stopped and every line is written.
    /// - Throws: the first ``RecordingError`` met while recording.
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
            if progress.started {
                progress.error = progress.error ?? .recorderReused
                return false
            }
            progress.started = true
            progress.startTime = .now
            return true
        }
        guard first else { return }
        let header = RecordingFormat.Header(
            format: RecordingFormat.name, version: RecordingFormat.version,
            initialState: (initialState as? any Encodable).map(AnyEncodable.init))
        // Encoded here, once: the state is only known to be Sendable, not
        // its Encodable wrapper.
        do {
            let line = try Self.line(header)
            enqueueWrite { line }
        } catch {
            fail(.writeFailed(reason: "the initial state cannot be encoded: \(error)"))
        }
    }

    public func eventReduced(_ event: Event, newState: State, reduction: Int) {
        let now = ContinuousClock.now
        progress.withLock { progress in
            let elapsed = progress.startTime.duration(to: now).components
            let nanoseconds = elapsed.seconds * 1_000_000_000 + elapsed.attoseconds / 1_000_000_000
            progress.pending.append(.init(reduction: reduction, timeNanoseconds: nanoseconds, event: event))
        }
    }

    public func batchReduced(_ batch: ReductionBatch) {
        flushPending()
    }

    public func loopStopped(_ report: StopReport) {
        flushPending()
        let footer = RecordingFormat.Footer(stopped: .init(reduced: report.reduced, discarded: report.discarded))
        enqueueWrite { try Self.line(footer) }
        writer.async { [self] in
            do { try close() } catch { fail(.writeFailed(reason: String(describing: error))) }
            let (waiters, error) = progress.withLock { progress in
                progress.finished = true
                let waiters = progress.waiters
                progress.waiters = []
                return (waiters, progress.error)
            }
            for waiter in waiters {
                if let error { waiter.resume(throwing: error) } else { waiter.resume() }
            }
        }
    }

    // MARK: Writing (the writer queue)

    private func flushPending() {
        let batch = progress.withLock { progress -> [RecordingFormat.Reduction<Event>] in
            defer { progress.pending.removeAll(keepingCapacity: true) }
            return progress.pending
        }
        guard !batch.isEmpty else { return }
        enqueueWrite {
            let encoder = Self.encoder()
            var data = Data()
            for entry in batch { data.append(try Self.line(entry, encoder)) }
            return data
        }
    }

    private func enqueueWrite(_ makeData: @escaping @Sendable () throws -> Data) {
        writer.async { [self] in
            guard progress.withLock({ $0.error == nil }) else { return }
            do {
                try write(try makeData())
            } catch let error as RecordingError {
                fail(error)
            } catch {
                fail(.writeFailed(reason: String(describing: error)))
            }
        }
    }

    private func fail(_ error: RecordingError) {
        progress.withLock { progress in progress.error = progress.error ?? error }
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
