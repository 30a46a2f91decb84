// Watch a loop from inside with a `SpinObserver`: one that prints each
// reduction, one that reads only batches, and swift-log's `LoggingObserver`.

// snippet.hide
import Logging
import Spindle
import Synchronization

struct Levels: Equatable, Sendable {
    var left: Int
    var right: Int
}

enum LevelsEvent: Sendable {
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

/// Waits until the levels meet (a positive signal, not a sleep).
func untilBalanced(_ loop: SpinLoop<Levels, LevelsEvent>) async {
    for await state in loop.states() where state.left >= state.right { break }
}

let heard = Mutex<[(reduction: Int, event: LevelsEvent, state: Levels)]>([])
let batches = Mutex<[ReductionBatch]>([])
let stopReports = Mutex<[StopReport]>([])

/// Keeps the log lines, to check what `LoggingObserver` wrote.
struct KeptLines: LogHandler {
    static let lines = Mutex<[String]>([])
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .info
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }
    func log(event: LogEvent) {
        let metadata = (event.metadata ?? [:]).map { "\($0.key)=\($0.value)" }.sorted().joined(separator: " ")
        Self.lines.withLock { $0.append("\(event.level) \(event.message) \(metadata)") }
    }
}
LoggingSystem.bootstrap { _ in KeptLines() }
// snippet.show

// snippet.observer
struct PrintReductions: SpinObserver {
    func eventReduced(_ event: LevelsEvent, newState: Levels, reduction: Int) {
        print("#\(reduction): \(event) -> \(newState)")
        // snippet.hide
        heard.withLock { $0.append((reduction, event, newState)) }
        // snippet.show
    }
}

let loop = try spin.observed(by: PrintReductions()).start()
// snippet.end

// snippet.hide
await untilBalanced(loop)
await loop.stop()
let reductions = heard.withLock { $0 }
precondition(reductions.map(\.reduction) == Array(1...reductions.count), "reductions count from 1, in order")
// Replaying the reduced events through the reducer gives the same states.
var replayed = spin.initialState
for (_, event, state) in reductions {
    replayed = levelsReducer(replayed, event)
    precondition(replayed == state, "eventReduced's events replay to its states")
}
precondition(replayed == loop.state, "the last reduction is the final state")
// snippet.show

// snippet.batches
struct QueueDepthWatch: SpinObserver {
    // No callback below names the state or the event: declare them.
    typealias State = Levels
    typealias Event = LevelsEvent

    var observesEachEvent: Bool { false }  // batches only: no call per event

    func batchReduced(_ batch: ReductionBatch) {
        if batch.queueDepth > 10_000 {
            print("falling behind: \(batch.queueDepth) events wait")
        }
        // snippet.hide
        batches.withLock { $0.append(batch) }
        // snippet.show
    }
    // snippet.hide
    func loopStopped(_ report: StopReport) {
        stopReports.withLock { $0.append(report) }
    }
    // snippet.show
}

let watched = try spin.observed(by: QueueDepthWatch()).start()
// snippet.end

// snippet.hide
await untilBalanced(watched)
let watchedReport = await watched.stop()
// stop() returns after loopStopped, the executor's last call.
precondition(stopReports.withLock { $0 } == [watchedReport], "loopStopped came before stop() returned")
let seenBatches = batches.withLock { $0 }
precondition(seenBatches.map(\.events).reduce(0, +) == watchedReport.reduced, "the batches add up to the reductions")
precondition(seenBatches.last?.totalReduced == watchedReport.reduced, "totalReduced counts the loop's life")
// snippet.show

// snippet.logging
var logger = Logger(label: "levels")
logger.logLevel = .debug
let logged = try spin.observed(by: LoggingObserver(logger: logger, level: .debug)).start()
// snippet.end

// snippet.hide
await untilBalanced(logged)
await logged.stop()
let lines = KeptLines.lines.withLock { $0 }
precondition(
    lines.contains("debug reduced #1: increaseLeft -> Levels(left: 1, right: 10) reduction=1")
        || lines.contains("debug reduced #1: decreaseRight -> Levels(left: 0, right: 9) reduction=1"),
    "LoggingObserver logs each reduction with its number: \(lines.prefix(3))")
precondition(lines.contains { $0.hasPrefix("debug loop stopped:") }, "LoggingObserver logs the stop")

// Above `level`, the observer asks for no event at all.
var quiet = Logger(label: "quiet")
quiet.logLevel = .info
precondition(!LoggingObserver<Levels, LevelsEvent>(logger: quiet, level: .debug).observesEachEvent,
             "a logger above the level costs no per-event call")
// snippet.show
