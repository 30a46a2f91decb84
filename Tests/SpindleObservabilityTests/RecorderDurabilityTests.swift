#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Foundation
import Spindle
import SpindleReplay
import Testing
import SpindleTestSupport

/// Collects each chunk the recorder writes, and each watermark it reports.
final class ChunkSink: Sendable {
    private let storage = Locked<(chunks: [Data], watermarks: [RecordingWatermark])>(([], []))
    var chunks: [Data] { storage.withLock { $0.chunks } }
    var watermarks: [RecordingWatermark] { storage.withLock { $0.watermarks } }
    func write(_ chunk: Data) { storage.withLock { $0.chunks.append(chunk) } }
    func flushed(_ watermark: RecordingWatermark) { storage.withLock { $0.watermarks.append(watermark) } }
}

/// A door writers wait at until the test opens it, once and for all.
final class WriterGate: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    func pass() {
        semaphore.wait()
        semaphore.signal()
    }
    func open() { semaphore.signal() }
}

/// Plays a loop's reducer-thread callbacks into `recorder`: the batches of
/// `.bonus` events given, reductions counted from 1.
func drive(_ recorder: SpinRecorder<Ledger, LedgerEvent>, batches: [Int], stop: Bool = true, afterEach: (Int) -> Void = { _ in }) {
    recorder.loopStarted(initialState: Ledger())
    var reduction = 0
    for size in batches {
        for _ in 0..<size {
            reduction += 1
            recorder.eventReduced(.bonus(reduction), newState: Ledger(), reduction: reduction)
            afterEach(reduction)
        }
        recorder.batchReduced(ReductionBatch(events: size, totalReduced: reduction, queueDepth: 0, duration: .zero))
    }
    if stop { recorder.loopStopped(StopReport(reduced: reduction, discarded: 0)) }
}

func lineCount(_ data: Data) -> Int { data.filter { $0 == 0x0A }.count }

func temporaryRecordingURL() -> URL {
    FileManager.default.temporaryDirectory.appendingPathComponent("spindle-durability-\(UUID().uuidString).jsonl")
}

@Suite("Recorder durability (flush, sync, backlog, torn tails)")
struct RecorderDurabilityTests {
    @Test("everyBatch writes the header, each batch and the footer in one write each")
    func everyBatchWritesEachBatch() async throws {
        let sink = ChunkSink()
        let recorder = SpinRecorder<Ledger, LedgerEvent>(
            writer: { sink.write($0) }, options: .init(flush: .everyBatch, onFlush: { sink.flushed($0) }))
        drive(recorder, batches: [3, 1, 5])
        try await recorder.waitUntilWritten()
        #expect(sink.chunks.map(lineCount) == [1, 3, 1, 5, 1])
        #expect(sink.watermarks.map(\.written) == [0, 3, 4, 9, 9])
        #expect(sink.watermarks.allSatisfy { $0.synced == nil })
        #expect(recorder.watermark == RecordingWatermark(written: 9, synced: nil))
    }

    @Test("buffered writes once the buffer holds the byte threshold")
    func bufferedWritesAtTheByteThreshold() async throws {
        let sink = ChunkSink()
        let recorder = SpinRecorder<Ledger, LedgerEvent>(
            writer: { sink.write($0) },
            options: .init(flush: .buffered(bytes: 400, interval: .seconds(3_600)), onFlush: { sink.flushed($0) }))
        drive(recorder, batches: Array(repeating: 1, count: 40))
        try await recorder.waitUntilWritten()
        let chunks = sink.chunks
        #expect(chunks.count >= 3)
        // Every write but the last (at stop) reached the threshold, and the
        // line before its last one had not.
        for chunk in chunks.dropLast() {
            let lastLine = chunk.dropLast().lastIndex(of: 0x0A).map { chunk.endIndex - $0 - 1 } ?? chunk.count
            #expect(chunk.count >= 400 && chunk.count - lastLine < 400)
        }
        let recording = try SpinRecording<LedgerEvent>(jsonLines: chunks.reduce(Data(), +))
        #expect(recording.entries.count == 40 && recording.stopReport != nil)
    }

    @Test("buffered writes what it holds once the interval has passed")
    func bufferedWritesAfterTheInterval() async throws {
        let sink = ChunkSink()
        let recorder = SpinRecorder<Ledger, LedgerEvent>(
            writer: { sink.write($0) },
            options: .init(flush: .buffered(bytes: 1 << 20, interval: .milliseconds(5)), onFlush: { sink.flushed($0) }))
        drive(recorder, batches: [2], stop: false)
        // Far below the byte threshold and the loop still runs: only the
        // timer writes these lines.
        #expect(await eventually { recorder.watermark?.written == 2 })
        // The timer may have fired between the header and the batch.
        let beforeStop = sink.chunks.count
        #expect(sink.chunks.map(lineCount).reduce(0, +) == 3)
        recorder.loopStopped(StopReport(reduced: 2, discarded: 0))
        try await recorder.waitUntilWritten()
        #expect(sink.chunks.count == beforeStop + 1 && sink.chunks.last.map(lineCount) == 1)
    }

    @Test("waitForWriter: with the writer stuck, the reducer waits once backlogLimit reductions wait")
    func slowWriterMakesTheReducerWait() async throws {
        let gate = WriterGate()
        let sink = ChunkSink()
        let recorder = SpinRecorder<Ledger, LedgerEvent>(
            writer: { gate.pass(); sink.write($0) },
            options: .init(backlogLimit: 4, whenBacklogFull: .waitForWriter))
        let reduced = Counter()
        let driver = Thread { drive(recorder, batches: Array(repeating: 1, count: 10)) { _ in reduced.add() } }
        driver.start()
        #expect(await eventually { recorder.backlogWaits == 1 })
        // Reductions 1…4 fill the backlog; the 5th waits inside the call.
        #expect(reduced.current == 4)
        gate.open()
        try await recorder.waitUntilWritten()
        #expect(reduced.current == 10)
        let recording = try SpinRecording<LedgerEvent>(jsonLines: sink.chunks.reduce(Data(), +))
        #expect(recording.entries.count == 10 && recording.stopReport == StopReport(reduced: 10, discarded: 0))
    }

    @Test("stopRecording: with the writer stuck, the recording stops once, after the last reduction it holds")
    func slowWriterStopsTheRecording() async throws {
        let gate = WriterGate()
        let sink = ChunkSink()
        let errors = Recorder<RecordingError>()
        let recorder = SpinRecorder<Ledger, LedgerEvent>(
            writer: { gate.pass(); sink.write($0) },
            options: .init(backlogLimit: 4, whenBacklogFull: .stopRecording, onError: { errors.append($0) }))
        let reduced = Counter()
        let driver = Thread { drive(recorder, batches: Array(repeating: 1, count: 10)) { _ in reduced.add() } }
        driver.start()
        // The loop never waits for the stuck writer.
        #expect(await eventually { reduced.current == 10 })
        #expect(recorder.backlogWaits == 0)
        gate.open()
        let expected = RecordingError.writerFellBehind(backlogLimit: 4, lastWrittenReduction: 4)
        await #expect(throws: expected) { try await recorder.waitUntilWritten() }
        #expect(errors.values == [expected])
        #expect(recorder.error == expected)
        let recording = try SpinRecording<LedgerEvent>(jsonLines: sink.chunks.reduce(Data(), +))
        #expect(recording.entries.count == 4 && recording.stopReport == nil)
    }

    @Test("a recording cut at every byte reads as its complete lines plus the torn one")
    func tornTailAtEveryOffset() async throws {
        let sink = ChunkSink()
        let recorder = SpinRecorder<Ledger, LedgerEvent>(writer: { sink.write($0) })
        drive(recorder, batches: [2, 3])
        try await recorder.waitUntilWritten()
        let whole = sink.chunks.reduce(Data(), +)
        let expected = try SpinRecording<LedgerEvent>(jsonLines: whole).replay(through: ledgerReducer, from: Ledger())
        #expect(expected.count == 6)
        for cut in 0...whole.count {
            let data = whole.prefix(cut)
            let complete = lineCount(data)
            // A last line missing only its line feed is whole JSON: complete.
            let wholeTail = cut < whole.count && whole[cut] == 0x0A && data.last != 0x0A && cut > 0
            let lines = complete + (wholeTail ? 1 : 0)
            let torn = cut > 0 && data.last != 0x0A && !wholeTail
            let strict = Result { try SpinRecording<LedgerEvent>(jsonLines: data) }
            let recovered = Result { try SpinRecording<LedgerEvent>(jsonLines: data, tornLastLine: .drop) }
            if cut == 0 {
                #expect(throws: RecordingError.notARecording(firstLine: "")) { try strict.get() }
                continue
            }
            if torn {
                #expect(throws: RecordingError.tornLastLine(line: complete + 1), "cut at \(cut)") { try strict.get() }
            }
            if torn && complete == 0 {
                #expect(throws: RecordingError.tornLastLine(line: 1), "cut at \(cut)") { try recovered.get() }
                continue
            }
            let recording = try #require(try? (torn ? recovered : strict).get(), "cut at \(cut)")
            #expect(recording.tornTail == (torn ? .tornLastLine(line: complete + 1) : nil), "cut at \(cut)")
            let reductions = min(lines - 1, 5)
            #expect(recording.entries.count == reductions, "cut at \(cut)")
            #expect(recording.stopReport == (lines == 7 ? StopReport(reduced: 5, discarded: 0) : nil), "cut at \(cut)")
            #expect(recording.replay(through: ledgerReducer, from: Ledger()) == Array(expected.prefix(reductions + 1)))
        }
    }

    @Test("sync policies: fsync after every flush, once at stop, or never", arguments: [
        RecorderOptions.Sync.never, .atStop, .everyFlush,
    ])
    func syncPolicies(_ sync: RecorderOptions.Sync) async throws {
        let url = temporaryRecordingURL()
        defer { try? FileManager.default.removeItem(at: url) }
        let syncs = Counter()
        var calls = RecordingFileCalls.system
        let fsync = calls.fsync
        calls.fsync = { fd in syncs.add(); return fsync(fd) }
        let sink = ChunkSink()
        let recorder = try SpinRecorder<Ledger, LedgerEvent>(
            file: url, options: .init(sync: sync, onFlush: { sink.flushed($0) }), calls: calls)
        drive(recorder, batches: [2, 2, 2])
        try await recorder.waitUntilWritten()
        let watermarks = sink.watermarks
        #expect(watermarks.map(\.written) == [0, 2, 4, 6, 6])
        switch sync {
        case .never:
            #expect(syncs.current == 0)
            #expect(watermarks.allSatisfy { $0.synced == nil })
        case .atStop:
            #expect(syncs.current == 1)
            #expect(watermarks.dropLast().allSatisfy { $0.synced == nil } && watermarks.last?.synced == 6)
        case .everyFlush:
            #expect(syncs.current == 5)
            #expect(watermarks.allSatisfy { $0.synced == $0.written })
        }
        #expect(try SpinRecording<LedgerEvent>(contentsOf: url).entries.count == 6)
    }

    @Test("EINTR and short writes are retried; ENOSPC stops the recording once, on a complete line")
    func posixWriteErrors() async throws {
        let url = temporaryRecordingURL()
        defer { try? FileManager.default.removeItem(at: url) }
        // Each call: EINTR first, then at most 7 bytes; ENOSPC past 300 bytes.
        let state = Locked((calls: 0, bytes: 0))
        var calls = RecordingFileCalls.system
        let write = calls.write
        calls.write = { fd, buffer, count in
            let (call, bytes) = state.withLock { state in
                state.calls += 1
                return (state.calls, state.bytes)
            }
            if call % 2 == 1 {
                errno = EINTR
                return -1
            }
            let allowed = min(count, 7, 300 - bytes)
            if allowed <= 0 {
                errno = ENOSPC
                return -1
            }
            let written = write(fd, buffer, allowed)
            state.withLock { $0.bytes += max(written, 0) }
            return written
        }
        let errors = Recorder<RecordingError>()
        let recorder = try SpinRecorder<Ledger, LedgerEvent>(file: url, options: .init(onError: { errors.append($0) }), calls: calls)
        drive(recorder, batches: [1, 1, 1, 1, 1, 1])
        do {
            try await recorder.waitUntilWritten()
            Issue.record("a full disk was not reported")
        } catch let error as RecordingError {
            guard case .fileCallFailed("write", ENOSPC, let last) = error else {
                Issue.record("wrong error: \(error)")
                return
            }
            #expect(errors.values == [error])
            // The file was cut back to its last complete line: it reads
            // strictly, up to the reduction the error names.
            let recording = try SpinRecording<LedgerEvent>(contentsOf: url)
            #expect(recording.entries.count == last && last > 0 && last < 6)
            #expect(recording.stopReport == nil)
        }
    }
}
