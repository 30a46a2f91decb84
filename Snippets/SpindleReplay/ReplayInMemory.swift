// Record through a closure instead of a file (here into memory, as a test
// would; a pipe or a socket works the same way), read the JSON Lines back,
// and replay a recording whose state is not `Encodable`.

// snippet.hide
import Foundation
import Spindle
import SpindleReplay
import Synchronization

// A state that is not Encodable: the header's initial_state is null.
struct Tally: Equatable, Sendable {
    var total = 0
}

enum TallyEvent: Equatable, Sendable, Codable {
    case add(Int)
}

let tallyReducer = Reducer<Tally, TallyEvent> { state, event in
    var state = state
    switch event {
    case .add(let amount): state.total += amount
    }
    return state
}

let spin = Spin(initialState: Tally()) {
    tallyReducer
}
// snippet.show

// snippet.writer
let bytes = Mutex(Data())
let recorder = SpinRecorder<Tally, TallyEvent>(writer: { lines in
    bytes.withLock { $0.append(lines) }  // whole lines, in order, on the recorder's queue
})
let loop = try spin.observed(by: recorder).start()
loop.emit(contentsOf: (1...10).map(TallyEvent.add))
await loop.stop()
try await recorder.waitUntilWritten()
// snippet.end

// snippet.read
let recording = try SpinRecording<TallyEvent>(jsonLines: bytes.withLock { $0 })
// The state is not Encodable, so the recording has no initial state: pass one.
let states = recording.replay(through: tallyReducer, from: Tally())
// snippet.end

// snippet.hide
precondition(states.map(\.total) == [0, 1, 3, 6, 10, 15, 21, 28, 36, 45, 55], "the replay gives every state")
precondition(states.last == loop.state, "the replay ends on the loop's final state")
precondition(recording.events == (1...10).map(TallyEvent.add), "the events, in reduction order")
do {
    _ = try recording.initialState(as: Int.self)
    preconditionFailure("a recording of a state that is not Encodable has no initial state")
} catch RecordingError.noInitialState {
    // as the article says
}
let header = String(decoding: bytes.withLock { $0 }.prefix { $0 != 0x0A }, as: UTF8.self)
precondition(header == #"{"format":"spindle-recording","initial_state":null,"version":1}"#, "header: \(header)")

// One recorder records one loop run.
let again = try spin.observed(by: recorder).start()
await again.stop()
do {
    try await recorder.waitUntilWritten()
    preconditionFailure("a recorder attached to a second loop reports it")
} catch RecordingError.recorderReused {
    // as the article says
}
// snippet.show
