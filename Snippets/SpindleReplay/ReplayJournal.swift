// Use a recording as a journal: choose when lines are written and synced,
// what happens when the writer falls behind, and how far the file has got;
// then read back a recording that was cut short, as a killed process leaves it.

// snippet.hide
import Foundation
import Spindle
import SpindleReplay
import Synchronization

struct Levels: Equatable, Sendable, Codable {
    var left: Int
    var right: Int
}

enum LevelsEvent: Equatable, Sendable, Codable {
    case increaseLeft
    case decreaseRight
}

@Sendable func levelsReducer(_ state: Levels, _ event: LevelsEvent) -> Levels {
    var state = state
    switch event {
    case .increaseLeft: state.left += 1
    case .decreaseRight: state.right -= 1
    }
    return state
}

@Sendable func leftEffect(_ state: Levels) -> LevelsEvent? {
    state.left < state.right ? .increaseLeft : nil
}

@Sendable func rightEffect(_ state: Levels) -> LevelsEvent? {
    state.left < state.right ? .decreaseRight : nil
}

let spin = Spin(initialState: Levels(left: 0, right: 10)) {
    Feedback(effect: leftEffect)
    Feedback(effect: rightEffect)
    Reducer(levelsReducer)
}

let directory = FileManager.default.temporaryDirectory
    .appendingPathComponent("spindle-snippet-\(UUID().uuidString)", isDirectory: true)
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
let url = directory.appendingPathComponent("journal.jsonl")
let flushes = Mutex<[RecordingWatermark]>([])
let errors = Mutex<[RecordingError]>([])
// snippet.show

// snippet.options
let options = RecorderOptions(
    flush: .buffered(bytes: 64 * 1024, interval: .milliseconds(50)),  // fewer, larger writes
    sync: .atStop,                    // fsync once, after the footer
    whenBacklogFull: .stopRecording,  // never make the loop wait for the disk
    onFlush: { watermark in
        print(watermark)  // "written through reduction N, synced through …"
        // snippet.hide
        flushes.withLock { $0.append(watermark) }
        // snippet.show
    },
    onError: { error in
        print("recording stopped: \(error)")
        // snippet.hide
        errors.withLock { $0.append(error) }
        // snippet.show
    })
let recorder = try SpinRecorder<Levels, LevelsEvent>(file: url, options: options)
// snippet.end

// snippet.hide
let loop = try spin.observed(by: recorder).start()
for await state in loop.states() where state.left >= state.right { break }
let report = await loop.stop()
// snippet.show

// snippet.progress
try await recorder.waitUntilWritten()  // throws the error onError received, if any
if let watermark = recorder.watermark {
    print("\(watermark.written) reductions written, \(watermark.synced ?? 0) synced")
}
// snippet.end

// snippet.hide
precondition(recorder.error == nil && errors.withLock { $0 }.isEmpty, "the recording went through")
precondition(
    recorder.watermark == RecordingWatermark(written: report.reduced, synced: report.reduced),
    "after waitUntilWritten, every reduction is written and, with .atStop, synced")
let reported = flushes.withLock { $0 }
precondition(reported.last == recorder.watermark, "onFlush reported the last watermark")
precondition(
    zip(reported, reported.dropFirst()).allSatisfy { $0.written <= $1.written }, "watermarks only move forward")

// Options that cannot record are refused before the file is touched.
do {
    _ = try SpinRecorder<Levels, LevelsEvent>(file: url, options: RecorderOptions(backlogLimit: 0))
    preconditionFailure("a backlog limit of 0 cannot record")
} catch RecordingError.invalidOptions {
    // as the article says
}

// A process killed mid-write: the footer is gone and the last reduction
// line is cut in half.
let whole = try Data(contentsOf: url)
let lines = whole.split(separator: 0x0A, omittingEmptySubsequences: false)
let lastReduction = lines[lines.count - 3]  // then the footer, then the empty tail
let cutAt = whole.count - lines[lines.count - 2].count - 1 - 1 - lastReduction.count / 2
let torn = directory.appendingPathComponent("torn.jsonl")
try whole.prefix(cutAt).write(to: torn)
let tornLine = lines.count - 2  // the line numbers count from 1
var strictReadRefused = false
// snippet.show

// snippet.torn
do {
    _ = try SpinRecording<LevelsEvent>(contentsOf: torn)  // strict, by default
} catch RecordingError.tornLastLine(let line) {
    print("cut short in line \(line); the lines before it are complete")
    // snippet.hide
    precondition(line == tornLine, "the torn line is the one cut: \(line), not \(tornLine)")
    strictReadRefused = true
    // snippet.show
}

let recovered = try SpinRecording<LevelsEvent>(contentsOf: torn, tornLastLine: .drop)
let states = recovered.replay(spin)  // every state up to the last complete line
// snippet.end

// snippet.hide
let full = try SpinRecording<LevelsEvent>(contentsOf: url).replay(spin)
try FileManager.default.removeItem(at: directory)

precondition(strictReadRefused, "a strict read refuses a torn recording")
precondition(recovered.tornTail == .tornLastLine(line: tornLine), "tornTail names the dropped line")
precondition(recovered.stopReport == nil, "a cut recording has no footer")
precondition(states == Array(full.dropLast()), "the recovery replays every complete reduction")
// snippet.show
