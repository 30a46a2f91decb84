import Foundation
import Spindle

/// Everything a ``SpinObserver`` hears, in the order it heard it.
enum Heard<State: Sendable & Equatable, Event: Sendable & Equatable>: Sendable, Equatable {
    case started(State)
    case failedToStart(SpinExecutorError)
    case reduced(Event, State, Int)
    case batch(events: Int, total: Int)
    case dropped(Event)
    case rejected(Event)
    case discardedAtStop(Event)
    case effectStarted(EffectRun)
    case effectCancelled(EffectRun)
    case effectEmitted(Event, EffectRun)
    case effectFinished(EffectRun)
    case effectFailed(EffectRun, String)
    case late(Event, EffectRun)
    case stopped(StopReport)
}

/// An observer that writes down every callback (and the thread of each
/// reducer-thread callback).
final class ListeningObserver<State: Sendable & Equatable, Event: Sendable & Equatable>: SpinObserver, Sendable {
    private let log = Lock<[Heard<State, Event>]>([])
    private let reducerThreads = Lock<Set<String>>([])
    // Reducer-thread callbacks in progress, and how many began while
    // another was still in progress (two runners of one loop at once).
    private let inside = Lock((now: 0, overlaps: 0))
    // Apart from `log`: accepts come from the emitting threads, in no fixed
    // order with the reducer thread's callbacks.
    private let acceptedLog = Lock<[Event]>([])
    var accepted: [Event] { acceptedLog.withLock { $0 } }
    let observesEachEvent: Bool

    init(eachEvent: Bool = true) { observesEachEvent = eachEvent }

    var heard: [Heard<State, Event>] { log.withLock { $0 } }
    /// Distinct threads that made reducer-thread callbacks. On a pool the
    /// loop may move between its threads from one slice to the next.
    var reducerThreadCount: Int { reducerThreads.withLock { $0.count } }
    /// Reducer-thread callbacks that began while another was in progress:
    /// 0 unless two threads ran the loop at once.
    var overlappingReducerCalls: Int { inside.withLock { $0.overlaps } }

    private func add(_ item: Heard<State, Event>, onReducer: Bool = false) {
        guard onReducer else {
            log.withLock { $0.append(item) }
            return
        }
        inside.withLock { inside in
            if inside.now > 0 { inside.overlaps += 1 }
            inside.now += 1
        }
        let name = "\(Unmanaged.passUnretained(Thread.current).toOpaque())"
        reducerThreads.withLock { _ = $0.insert(name) }
        log.withLock { $0.append(item) }
        inside.withLock { $0.now -= 1 }
    }

    func loopStarted(initialState: State) { add(.started(initialState), onReducer: true) }
    func loopFailedToStart(_ error: SpinExecutorError) { add(.failedToStart(error)) }
    func eventReduced(_ event: Event, newState: State, reduction: Int) {
        add(.reduced(event, newState, reduction), onReducer: true)
    }
    func batchReduced(_ batch: ReductionBatch) {
        add(.batch(events: batch.events, total: batch.totalReduced), onReducer: true)
    }
    func eventAccepted(_ event: Event) { acceptedLog.withLock { $0.append(event) } }
    func eventDropped(_ event: Event) { add(.dropped(event)) }
    func eventRejected(_ event: Event) { add(.rejected(event)) }
    func eventDiscardedAtStop(_ event: Event) { add(.discardedAtStop(event), onReducer: true) }
    func effectStarted(_ run: EffectRun) { add(.effectStarted(run)) }
    func effectCancelled(_ run: EffectRun) { add(.effectCancelled(run)) }
    func effectEmitted(_ event: Event, from run: EffectRun) { add(.effectEmitted(event, run)) }
    func effectFinished(_ run: EffectRun) { add(.effectFinished(run)) }
    func effectFailed(_ run: EffectRun, error: any Error) { add(.effectFailed(run, String(describing: error))) }
    func lateEventDiscarded(_ event: Event, from run: EffectRun) { add(.late(event, run)) }
    func loopStopped(_ report: StopReport) { add(.stopped(report), onReducer: true) }
}

/// A test error with a name.
struct Boom: Error, CustomStringConvertible {
    var description: String { "boom" }
}
