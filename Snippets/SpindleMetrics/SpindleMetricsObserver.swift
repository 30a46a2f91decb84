// Report a loop to swift-metrics with `MetricsObserver`: counters for its
// events and effect runs, a gauge for its queue depth, a timer and a
// recorder for its batches.

// snippet.hide
import CoreMetrics
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

/// A metrics backend that keeps every value it is given, by label and
/// dimensions, to check what the observer reported.
final class KeptValues: CounterHandler, RecorderHandler, TimerHandler, Sendable {
    let values = Mutex<[Int64]>([])
    func increment(by amount: Int64) { values.withLock { $0.append(amount) } }
    func reset() { values.withLock { $0 = [] } }
    func record(_ value: Int64) { values.withLock { $0.append(value) } }
    func record(_ value: Double) { values.withLock { $0.append(Int64(value)) } }
    func recordNanoseconds(_ duration: Int64) { values.withLock { $0.append(duration) } }
    var all: [Int64] { values.withLock { $0 } }
}

final class KeptMetrics: MetricsFactory, Sendable {
    let handlers = Mutex<[String: KeptValues]>([:])
    func handler(_ label: String, _ dimensions: [(String, String)]) -> KeptValues {
        let key = ([label] + dimensions.map { "\($0.0)=\($0.1)" }).joined(separator: " ")
        return handlers.withLock { handlers in
            if let kept = handlers[key] { return kept }
            let kept = KeptValues()
            handlers[key] = kept
            return kept
        }
    }
    func values(_ key: String) -> [Int64] { handlers.withLock { $0[key] }?.all ?? [] }
    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        handler(label, dimensions)
    }
    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        handler(label, dimensions)
    }
    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        handler(label, dimensions)
    }
    func destroyCounter(_ handler: any CounterHandler) {}
    func destroyRecorder(_ handler: any RecorderHandler) {}
    func destroyTimer(_ handler: any TimerHandler) {}
}

// The application bootstraps its backend once, at launch (Prometheus,
// StatsD, OpenTelemetry…); here, one that keeps the values.
let metrics = KeptMetrics()
MetricsSystem.bootstrap(metrics)
// snippet.show

// snippet.observer
import SpindleMetrics

let measured = try spin
    .observed(by: MetricsObserver<Levels, LevelsEvent>(dimensions: [("loop", "levels")]))
    .start()
// snippet.end

// snippet.hide
for await state in measured.states() where state.left >= state.right { break }
let report = await measured.stop()

let reduced = metrics.values("spindle_events_reduced loop=levels")
precondition(reduced.reduce(0, +) == Int64(report.reduced), "the reduced counter adds up to the stop report")
let batchSizes = metrics.values("spindle_batch_size loop=levels")
precondition(batchSizes == reduced, "one batch-size record per batch, added to the counter once per batch")
let durations = metrics.values("spindle_reduction_duration loop=levels")
precondition(durations.count == batchSizes.count, "one timer record (a mean) per batch")
precondition(
    metrics.values("spindle_queue_depth loop=levels").count == batchSizes.count,
    "the queue-depth gauge is set after each batch")
precondition(
    !metrics.values("spindle_effects_started loop=levels").isEmpty, "the feedbacks' runs are counted")
precondition(
    metrics.values("spindle_events_dropped loop=levels").isEmpty
        && metrics.values("spindle_events_discarded loop=levels reason=stop").isEmpty,
    "nothing was dropped or discarded")
precondition(
    !MetricsObserver<Levels, LevelsEvent>().observesEachEvent, "the observer asks for batches only")
// snippet.show
