import Spindle

/// The state of the loop a ``FeedbackSpec`` runs: which given state is
/// current, and the feedback's events reduced so far.
///
/// `fresh` is true only for the state an advance produced. Reducing one of
/// the feedback's own events produces a state with `fresh == false`, which
/// the harness's filter turns away — and a filtered-out state starts
/// nothing and cancels nothing — so the feedback sees exactly the given
/// states, once each.
struct Frame<State: Sendable, Event: Sendable>: Sendable {
    var step: Int
    var state: State
    var fresh: Bool
    /// The feedback's events, in reduction order.
    var emissions: [FeedbackRunResult<Event>.Emission] = []
    /// Completion markers reduced (see ``HarnessInput``).
    var markers = 0
}

/// The events of a spec's loop.
enum HarnessInput<Event: Sendable>: Sendable {
    /// From the driver: move on to the next given state.
    case advance
    /// From the wrapped effect: a run for `step` emitted `event` (nil: a
    /// sync or async run returned nil; it still marks the run's result).
    case emitted(Event?, step: Int)
    /// From a wrapped sequence: the run for `step` ended its sequence.
    case ended(step: Int)

    /// True for the events the wrapped effect hands to the engine.
    var isMarker: Bool {
        if case .advance = self { return false }
        return true
    }
}

/// The pure reducer of a spec's loop.
func harnessReducer<State: Sendable, Event: Sendable>(
    states: [State]
) -> Reducer<Frame<State, Event>, HarnessInput<Event>> {
    Reducer { frame, input in
        var frame = frame
        switch input {
        case .advance:
            frame.step += 1
            frame.state = states[frame.step]
            frame.fresh = true
        case .emitted(let event, let step):
            frame.fresh = false
            frame.markers += 1
            if let event { frame.emissions.append(.init(step: step, event: event)) }
        case .ended:
            frame.fresh = false
            frame.markers += 1
        }
        return frame
    }
}

/// What the wrapped effect reports from the feedback's threads: which
/// states the feedback has seen, which runs started and ended, and how many
/// markers it handed to the engine.
///
/// **Thread safety:** any thread; every field is behind one lock.
final class RunRecorder: Sendable {
    struct Counts: Sendable {
        /// The highest step whose state reached the feedback (-1: none yet).
        var lastSeen = -1
        /// Steps whose state passed the filter and started a run, in order.
        var runSteps: [Int] = []
        var runsEnded = 0
        /// Markers the wrapped effect returned to the engine.
        var handedOff = 0
        /// Steps whose run ended cancelled, ascending: kept sorted as they
        /// arrive, because cancelled runs end in whatever order their tasks
        /// notice the cancellation, which the engine does not promise.
        var cancelledSteps: [Int] = []
        var failures: [EffectRunFailure] = []
    }

    // protected by its own lock
    let counts = Lock(Counts())

    /// Feedback's queue: the state for `step` reached the feedback.
    func saw(step: Int, startsRun: Bool) {
        counts.withLock {
            $0.lastSeen = max($0.lastSeen, step)
            if startsRun { $0.runSteps.append(step) }
        }
    }

    /// A run ended. `handedOff` markers are counted in the same critical
    /// section, so no one sees the run ended before its marker is counted.
    func ended(step: Int, cancelled: Bool, handedOff: Int, error: (any Error)? = nil) {
        counts.withLock {
            $0.runsEnded += 1
            $0.handedOff += handedOff
            if cancelled {
                let at = $0.cancelledSteps.firstIndex { $0 > step } ?? $0.cancelledSteps.endIndex
                $0.cancelledSteps.insert(step, at: at)
            }
            if let error { $0.failures.append(.init(step: step, error: error)) }
        }
    }

    /// A sequence run returned one more marker.
    func handedOff() {
        counts.withLock { $0.handedOff += 1 }
    }
}

/// Wraps a run's sequence: tags each element with its step, appends an
/// ``HarnessInput/ended(step:)`` marker when the sequence ends, and reports
/// the run's end to the recorder however it ends.
struct TaggedEvents<Base: AsyncSequence & SendableMetatype>: AsyncSequence, SendableMetatype
where Base.Element: Sendable {
    typealias Element = HarnessInput<Base.Element>

    let base: Base
    let step: Int
    let recorder: RunRecorder

    func makeAsyncIterator() -> Iterator {
        Iterator(base: base.makeAsyncIterator(), end: RunEnd(step: step, recorder: recorder))
    }

    struct Iterator: AsyncIteratorProtocol {
        var base: Base.AsyncIterator
        let end: RunEnd

        mutating func next() async throws -> Element? {
            guard !end.done else { return nil }
            do {
                if let event = try await base.next() {
                    end.recorder.handedOff()
                    return .emitted(event, step: end.step)
                }
                end.finish(handedOff: 1, error: nil)
                return .ended(step: end.step)
            } catch is CancellationError {
                end.finish(handedOff: 0, error: nil)
                return nil
            } catch {
                end.finish(handedOff: 0, error: error)
                return nil
            }
        }
    }

    /// Reports the run's end once: when the sequence ends or throws, or —
    /// when the engine stops iterating because the run was cancelled — when
    /// the iterator goes away (in the run's task, so `Task.isCancelled`
    /// still answers for the run).
    final class RunEnd {
        let step: Int
        let recorder: RunRecorder
        // the run's task only (an iterator is used by one task)
        private(set) var done = false

        init(step: Int, recorder: RunRecorder) {
            self.step = step
            self.recorder = recorder
        }

        func finish(handedOff: Int, error: (any Error)?) {
            guard !done else { return }
            done = true
            // As the engine: a cancelled run's error is not reported.
            let cancelled = Task.isCancelled
            recorder.ended(step: step, cancelled: cancelled, handedOff: handedOff, error: cancelled ? nil : error)
        }

        deinit {
            finish(handedOff: 0, error: nil)
        }
    }
}
