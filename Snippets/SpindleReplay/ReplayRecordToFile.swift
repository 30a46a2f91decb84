// Record every event a loop reduces to a JSON Lines file, read the
// recording back, and replay it through the reducer to get every state the
// loop went through, whatever threads emitted the events.

// snippet.hide
import Foundation
import Spindle

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
let url = directory.appendingPathComponent("levels.jsonl")
// snippet.show

// snippet.record
import SpindleReplay

let recorder = try SpinRecorder<Levels, LevelsEvent>(file: url)  // LevelsEvent: Codable (and Levels, for the header)
let loop = try spin.observed(by: recorder).start()
// … the loop runs; producers and feedbacks emit from any thread …
// snippet.hide
// Four producer tasks, besides the feedbacks.
await withTaskGroup(of: Void.self) { group in
    for producer in 0..<4 {
        group.addTask {
            for _ in 0..<250 { loop.emit(producer.isMultiple(of: 2) ? .increaseLeft : .decreaseRight) }
        }
    }
}
// snippet.show
await loop.stop()
try await recorder.waitUntilWritten()
// snippet.hide
let report = await loop.stop()  // a second stop returns the same report
// snippet.show
// snippet.end

// snippet.replay
let recording = try SpinRecording<LevelsEvent>(contentsOf: url)
let states = recording.replay(spin)  // the initial state, then one state per reduction
assert(states.last == loop.state)
// snippet.end

// snippet.hide
let lines = try String(contentsOf: url, encoding: .utf8).split(separator: "\n")
try FileManager.default.removeItem(at: directory)

precondition(states.last == loop.state, "the replay ends on the loop's final state")
precondition(states.first == Levels(left: 0, right: 10), "the replay starts from the initial state")
precondition(states.count == report.reduced + 1, "one state per reduction, after the initial one")
let recordedInitialState = try recording.initialState(as: Levels.self)
precondition(recordedInitialState == Levels(left: 0, right: 10), "the header holds the initial state")
precondition(recording.stopReport == report, "the footer holds the stop report")
precondition(recording.version == 1, "format version 1")
precondition(recording.entries.map(\.reduction) == Array(1...report.reduced), "reductions count from 1 with no gap")
precondition(
    zip(recording.entries, recording.entries.dropFirst()).allSatisfy { $0.time <= $1.time },
    "reduction times are monotonic")
// The lines the article shows.
precondition(
    lines.first == #"{"format":"spindle-recording","initial_state":{"left":0,"right":10},"version":1}"#,
    "the header line changed: \(lines.first ?? "")")
precondition(
    lines[1].hasPrefix(#"{"event":{"#) && lines[1].contains(#""reduction":1,"time_ns":"#),
    "the reduction line changed: \(lines[1])")
precondition(
    lines.last == #"{"stopped":{"discarded":0,"reduced":\#(report.reduced)}}"#,
    "the footer line changed: \(lines.last ?? "")")
// snippet.show
