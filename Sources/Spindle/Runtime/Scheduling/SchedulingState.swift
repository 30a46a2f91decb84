internal import Atomics

/// Where a loop is in the scheduling protocol (see `Model/PROTOCOL.md`).
///
/// Only the `idle → scheduled` edge puts a loop on an executor's ready
/// queue, and only a runner that wins `scheduled → running` runs it, so a
/// loop is never run by two threads at once and its event queue keeps one
/// consumer.
enum SchedulingState: UInt8, AtomicValue, Sendable, CustomStringConvertible {
    /// Not on any ready queue, no runner. The next emit (or wake) schedules it.
    case idle
    /// On exactly one ready queue (or one dispatch work item), no runner.
    case scheduled
    /// One runner is running a slice.
    case running
    /// Stopped: its last slice ran the finish. Never scheduled again.
    case finished

    // Written out to be inlined: the synthesized conversion is an
    // out-of-line call, and every emit's wake-up decodes the state once.
    @inline(__always)
    init?(rawValue: UInt8) {
        switch rawValue {
        case 0: self = .idle
        case 1: self = .scheduled
        case 2: self = .running
        case 3: self = .finished
        default: return nil
        }
    }

    @inline(__always)
    var rawValue: UInt8 {
        switch self {
        case .idle: 0
        case .scheduled: 1
        case .running: 2
        case .finished: 3
        }
    }

    var description: String {
        switch self {
        case .idle: "idle"
        case .scheduled: "scheduled"
        case .running: "running"
        case .finished: "finished"
        }
    }
}

/// How a slice of a loop's work ended (see `ScheduledLoop.runSlice`).
enum SliceOutcome: Sendable {
    /// Nothing left that the runner can see; `reduced` events were reduced.
    case drained(reduced: Int)
    /// The budget is used and work remains: run it again after others.
    case more
    /// The loop finished its stop.
    case finished
}

/// What an executor does with a loop after one scheduling of it.
enum RunResult: Sendable {
    /// The loop went idle (a later emit schedules it again).
    case idle
    /// The loop is scheduled again: put it back at the tail of the ready queue.
    case reschedule
    /// The loop finished; the executor forgets it.
    case finished
}

/// What `ScheduledLoop.wake(emitterMayRun:)` did.
enum WakeOutcome: Sendable {
    /// The loop was not idle (or another waker won): nothing to do.
    case notScheduled
    /// This call scheduled the loop on its executor.
    case scheduled
    /// This call scheduled the loop, and the caller runs it (`runHere()`).
    case runHere
}
