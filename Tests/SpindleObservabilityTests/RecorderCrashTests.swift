#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Spindle
import SpindleReplay
import RecorderCrashFixture
import Testing
import SpindleTestSupport

/// What a child run left: its stdout lines (complete ones only) and how it ended.
struct ChildRun {
    let lines: [String]
    let reason: Process.TerminationReason
    let status: Int32
}

/// The child executable, built beside the test bundle (SwiftPM builds it
/// because this target depends on it).
func recorderChildURL() throws -> URL {
    var directory = Bundle.main.bundleURL
    for _ in 0..<4 {
        let candidate = directory.appendingPathComponent("spindle-recorder-child")
        if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        directory.deleteLastPathComponent()
    }
    throw RecordingError.writeFailed(reason: "spindle-recorder-child not found near \(Bundle.main.bundleURL.path)")
}

/// Runs the child with `arguments`; kills it with SIGKILL after `killAfter`
/// unless nil. Blocking: call it on its own thread.
func runChild(_ arguments: [String], killAfter: Duration?) throws -> ChildRun {
    let process = Process()
    process.executableURL = try recorderChildURL()
    process.arguments = arguments
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let collected = Locked(Data())
    let drained = DispatchSemaphore(value: 0)
    // Drained all along, so the child never blocks on a full pipe.
    let reader = Thread {
        let data = output.fileHandleForReading.readDataToEndOfFile()
        collected.withLock { $0 = data }
        drained.signal()
    }
    reader.start()
    if let killAfter {
        let (seconds, attoseconds) = killAfter.components
        usleep(useconds_t(seconds * 1_000_000 + attoseconds / 1_000_000_000_000))
        kill(process.processIdentifier, SIGKILL)
    }
    process.waitUntilExit()
    drained.wait()
    let text = String(decoding: collected.withLock { $0 }, as: UTF8.self)
    // A line the kill cut has no line feed: it is not reported.
    var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    lines.removeLast()
    return ChildRun(lines: lines, reason: process.terminationReason, status: process.terminationStatus)
}

/// Runs `body` on its own thread (it blocks), off the cooperative pool.
func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try body() }) }
        thread.start()
    }
}

@Suite("Recorder crash safety (child processes)", .serialized)
struct RecorderCrashTests {
    @Test("a recording killed with SIGKILL at random moments reads back to every flushed state")
    func killedRecordingsReadBack() async throws {
        let seed = ProcessInfo.processInfo.environment["SPINDLE_KILL_SEED"].flatMap(UInt64.init)
            ?? UInt64.random(in: 0...UInt64.max)
        print("RecorderCrashTests: kill seed \(seed) (SPINDLE_KILL_SEED=\(seed) repeats it)")
        var generator = SplitMix64(seed: seed)
        let kills = 24
        var survived = 0
        var tornTails = 0
        var reductions: [Int] = []
        let started = ContinuousClock.now
        for round in 0..<kills {
            let url = FileManager.default.temporaryDirectory
                .appendingPathComponent("spindle-kill-\(UUID().uuidString).jsonl")
            defer { try? FileManager.default.removeItem(at: url) }
            let delay = Duration.microseconds(Int64.random(in: 0...1_000_000, using: &generator))
            let run = try await onOwnThread { try runChild(["kill", url.path], killAfter: delay) }
            #expect(run.reason == .uncaughtSignal && run.status == SIGKILL, "round \(round): the child ended otherwise")
            let watermark = run.lines.last { $0.hasPrefix("written ") }.flatMap { Int($0.dropFirst(8)) }

            let data = (try? Data(contentsOf: url)) ?? Data()
            let strict = Result { try SpinRecording<Int>(jsonLines: data) }
            let recovered: SpinRecording<Int>
            do {
                recovered = try SpinRecording<Int>(jsonLines: data, tornLastLine: .drop)
            } catch let error as RecordingError {
                // No complete header: killed before the header was written.
                #expect(watermark == nil, "round \(round): \(error), yet the child reported \(watermark ?? -1)")
                #expect(error == .notARecording(firstLine: "") || error == .tornLastLine(line: 1))
                survived += 1
                continue
            }
            let count = recovered.entries.count
            reductions.append(count)
            #expect(recovered.stopReport == nil)
            #expect(count >= watermark ?? 0, "round \(round): \(count) reductions read, \(watermark ?? 0) reported written")
            #expect(recovered.entries.map(\.event) == Array(1...max(count, 1)).prefix(count).map { $0 })
            #expect(recovered.replay(through: tallyReducer, from: try recovered.initialState(as: Tally.self))
                == expectedTallies(through: count))
            switch strict {
            case .success:
                #expect(recovered.tornTail == nil)
            case .failure(let error):
                // Header, then one line per complete reduction, then the torn one.
                #expect(error as? RecordingError == .tornLastLine(line: count + 2), "round \(round): \(error)")
                #expect(recovered.tornTail == .tornLastLine(line: count + 2))
                #expect(data.last != 0x0A)
                tornTails += 1
            }
            survived += 1
        }
        let elapsed = ContinuousClock.now - started
        print("RecorderCrashTests: \(survived) of \(kills) kills survived in \(elapsed); torn tails \(tornTails); reductions per run \(reductions.min() ?? 0)…\(reductions.max() ?? 0)")
        #expect(survived == kills)
    }

    @Test("a full disk (EFBIG) stops the recording once, names the last reduction, and the loop goes on")
    func fullDiskStopsTheRecordingOnce() async throws {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("spindle-full-\(UUID().uuidString).jsonl")
        defer { try? FileManager.default.removeItem(at: url) }
        let started = ContinuousClock.now
        let run = try await onOwnThread { try runChild(["full-disk", url.path], killAfter: nil) }
        print("RecorderCrashTests: full-disk child ran for \(ContinuousClock.now - started)")
        #expect(run.reason == .exit && run.status == 0, "the child failed: \(run.lines.suffix(5))")
        #expect(run.lines.last == "done")
        func values(_ prefix: String) -> [[Int]] {
            run.lines.filter { $0.hasPrefix(prefix + " ") }.map {
                $0.dropFirst(prefix.count + 1).split(separator: " ").map { Int($0) ?? -1 }
            }
        }
        let errors = values("on-error")
        try #require(errors.count == 1, "onError calls: \(errors)")
        // "write" failed with EFBIG, after the last reduction written.
        #expect(run.lines.contains { $0 == "on-error write \(EFBIG) \(errors[0][2])" })
        let lastWritten = errors[0][2]
        #expect(values("wait-error") == [[-1, Int(EFBIG), lastWritten]])  // "write" is not an Int
        // Flushes reported before the failing write; that write may have
        // completed a few lines more before it failed.
        #expect((values("written").last?.first ?? 0) <= lastWritten)
        let errorAt = try #require(values("error-at").first?.first)
        let final = try #require(values("final").first?.first)
        #expect(errorAt >= lastWritten)
        #expect(final >= errorAt + 1_000, "the loop reduced \(final - errorAt) events after the error")

        // The file ends on the last written reduction: a valid cut-short
        // recording (the torn line was cut off), strict or recovered.
        let data = try Data(contentsOf: url)
        #expect(data.count <= 64 * 1024)
        let recording = try SpinRecording<Int>(jsonLines: data)
        #expect(recording.stopReport == nil)
        #expect(recording.entries.count == lastWritten)
        #expect(recording.replay(through: tallyReducer, from: Tally()) == expectedTallies(through: lastWritten))
        let recovered = try SpinRecording<Int>(jsonLines: data, tornLastLine: .drop)
        #expect(recovered.entries.count == lastWritten && recovered.tornTail == nil)
    }
}
