import Foundation
import Spindle
import SpindleReplay
import Testing
import SpindleTestSupport

/// Recorder options a caller computed (a backlog of 0, a buffered flush of
/// no bytes) are an error the caller can handle, never a crash.
@Suite("Recorder options that cannot record")
struct RecorderInvalidOptionsTests {
    static let invalid: [(String, RecorderOptions)] = [
        ("backlogLimit 0", RecorderOptions(backlogLimit: 0)),
        ("backlogLimit -3", RecorderOptions(backlogLimit: -3)),
        ("buffered 0 bytes", RecorderOptions(flush: .buffered(bytes: 0, interval: .milliseconds(5)))),
        ("buffered no interval", RecorderOptions(flush: .buffered(bytes: 4_096, interval: .zero))),
    ]

    @Test("a file recorder throws invalidOptions before it touches the file", arguments: invalid.indices)
    func fileRecorderThrows(_ index: Int) throws {
        let (name, options) = Self.invalid[index]
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("spindle-invalid-\(UUID().uuidString).jsonl")
        defer { try? FileManager.default.removeItem(at: url) }
        #expect {
            _ = try SpinRecorder<Ledger, LedgerEvent>(file: url, options: options)
        } throws: { error in
            guard case .invalidOptions = error as? RecordingError else { return false }
            return true
        }
        #expect(!FileManager.default.fileExists(atPath: url.path), "\(name): the file was created")
    }

    @Test("a writer recorder records nothing, reports once, and its loop runs", arguments: invalid.indices)
    func writerRecorderReportsAndTheLoopRuns(_ index: Int) async throws {
        let (name, options) = Self.invalid[index]
        let sink = ChunkSink()
        let errors = Locked<[RecordingError]>([])
        var reporting = options
        reporting.onError = { error in errors.withLock { $0.append(error) } }
        let recorder = SpinRecorder<Int, Int>(writer: { sink.write($0) }, options: reporting)
        guard case .invalidOptions = recorder.error else {
            Issue.record("\(name): error is \(String(describing: recorder.error))")
            return
        }
        let loop = try Spin(initialState: 0, feedbacks: [], reducer: Reducer<Int, Int> { $0 + $1 })
            .observed(by: recorder)
            .start()
        for value in 1...100 { loop.emit(value) }
        #expect(await loop.stop().reduced == 100)
        #expect(loop.state == 5_050)
        await #expect(throws: RecordingError.self) { try await recorder.waitUntilWritten() }
        #expect(sink.chunks.isEmpty, "\(name): the recorder wrote \(sink.chunks.count) chunks")
        #expect(await eventually { errors.withLock { $0.count } == 1 })
        #expect(errors.withLock { $0.count } == 1)
    }
}
