// The child process of the recorder's crash tests
// (Tests/SpindleObservabilityTests/RecorderCrashTests.swift): it records a
// loop with a deterministic reducer and reports on stdout, one line each:
//
//   written N          after each flush: reductions 1…N are in the file
//   on-error C E N     RecorderOptions.onError: call C failed with errno E
//                      after reduction N
//   error-at R         the loop's reduction count when the error was seen
//   final F            the loop's count once every later emit was reduced
//   wait-error C E N   the error waitUntilWritten() threw
//   done
//
//   spindle-recorder-child kill <path>        runs until killed
//   spindle-recorder-child full-disk <path>   a 64 KiB file-size limit
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Spindle
import SpindleReplay
import RecorderCrashFixture

/// Writes one line to stdout at once (no stdio buffer a kill would lose).
func report(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    bytes.withUnsafeBytes { buffer in
        var done = 0
        while done < buffer.count {
            let result = write(1, buffer.baseAddress! + done, buffer.count - done)
            if result < 0 { if errno == EINTR { continue } else { return } }
            done += result
        }
    }
}

func describe(_ error: RecordingError) -> String {
    guard case .fileCallFailed(let call, let code, let last) = error else { return "other \(error)" }
    return "\(call) \(code) \(last)"
}

let arguments = CommandLine.arguments
guard arguments.count == 3, ["kill", "full-disk"].contains(arguments[1]) else {
    report("usage: spindle-recorder-child kill|full-disk <path>")
    exit(2)
}
let mode = arguments[1]
let url = URL(fileURLWithPath: arguments[2])

if mode == "full-disk" {
    // write(2) then fails with EFBIG past 64 KiB instead of raising SIGXFSZ.
    signal(SIGXFSZ, SIG_IGN)
    var limit = rlimit(rlim_cur: 64 * 1024, rlim_max: 64 * 1024)
    guard setrlimit(Int32(RLIMIT_FSIZE.rawValue), &limit) == 0 else {
        report("setrlimit failed")
        exit(3)
    }
}

let recorder = try SpinRecorder<Tally, Int>(file: url, options: RecorderOptions(
    flush: .everyBatch,
    onFlush: { watermark in report("written \(watermark.written)") },
    onError: { error in report("on-error \(describe(error))") }))
let loop = try Spin<Tally, Int>(initialState: Tally(), feedbacks: [], reducer: tallyReducer)
    .observed(by: recorder)
    .start()

/// Emits `count` events from `next` in bursts of varied size, keeping at
/// most a few thousand unreduced (the child's pace, not a check).
func emit(from next: Int, count: Int, burst: () -> Int) -> Int {
    var value = next
    while value < next + count {
        for _ in 0..<min(burst(), next + count - value) {
            loop.emit(value)
            value += 1
        }
        while value - 1 - loop.state.count > 4_000 { usleep(200) }
        usleep(1_000)
    }
    return value
}

var generator = SystemRandomNumberGenerator()
if mode == "kill" {
    // Runs until the parent kills it.
    var next = 1
    while true { next = emit(from: next, count: 1_000, burst: { Int.random(in: 1...64, using: &generator) }) }
}

// full-disk: emit until the recording fails, then show the loop goes on.
var next = 1
while recorder.error == nil {
    next = emit(from: next, count: 64, burst: { 16 })
}
report("error-at \(loop.state.count)")
next = emit(from: next, count: 1_000, burst: { 50 })
while loop.state.count < next - 1 { usleep(200) }
report("final \(loop.state.count)")
await loop.stop()
do {
    try await recorder.waitUntilWritten()
    report("wait-error none")
} catch let error as RecordingError {
    report("wait-error \(describe(error))")
}
report("done")
