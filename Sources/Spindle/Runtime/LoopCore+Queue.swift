internal import Atomics
internal import CSpindle

// The loop's queue, whichever kind it is (`queueTag`): enqueue and wake,
// the runner's drain, and the emptiness checks the scheduling reads.
extension LoopCore {
    /// Enqueues and schedules the loop if it is idle; `.full` when a
    /// bounded loop's shared share is full. With `emitterMayRun`, the answer may be `.runHere` (see
    /// `wake(emitterMayRun:)`): the caller then runs the loop once it has
    /// left its gate section.
    @inline(__always)
    func tryEnqueueAndWake(_ event: Event, emitterMayRun: Bool) -> EnqueueOutcome {
        switch queueTag {
        case .lockFree:
            // A bounded loop's shared queue admits an event for each slot
            // of its share claimed.
            if let bound, !bound.tryClaim() { return .full }
            lockFreeQueue!.tryEnqueue(event)
            // The wfcqueue enqueue is an xchg, a full barrier: no fence needed
            // before `wake` reads the scheduling state (the Dekker pair).
            // A loop found idle is not streaming: no lane for this thread yet.
            let woke = wake(emitterMayRun: emitterMayRun)
            if woke != .notScheduled { spindle_lane_reset_streak(loopID) }
            return woke == .runHere ? .runHere : .enqueued
        case .custom:
            withCustomQueue { calls, queue in calls.enqueue(queue, event) }
            // An enqueue promises only a release (a mutex's unlock): fence
            // before reading the scheduling state.
            atomicMemoryFence(ordering: .sequentiallyConsistent)
            return wake(emitterMayRun: emitterMayRun) == .runHere ? .runHere : .enqueued
        }
    }

    /// Runner only.
    @inline(__always)
    func drainQueue(max: Int, _ body: (UnsafeMutableRawPointer) -> Void) -> Int {
        drainQueue(max: max, body) { first, count in
            var payload = first
            for _ in 0..<count {
                body(payload)
                payload += MemoryLayout<Event>.stride
            }
        }
    }

    /// `drainQueue`, with the lanes' events handed over a run at a time:
    /// `runs(first, count)` moves out `count` adjacent payloads
    /// (`MemoryLayout<Event>.stride` apart). Runner only.
    @inline(__always)
    func drainQueue(
        max: Int, _ body: (UnsafeMutableRawPointer) -> Void, runs: (UnsafeMutableRawPointer, Int) -> Void
    ) -> Int {
        assertOnRunner()
        switch queueTag {
        case .lockFree:
            if let bound { return drainBounded(bound, max: max, body, runs: runs) }
            // The shared queue first (its markers open lanes), then the lanes.
            let shared = lockFreeQueue!.drain(max: max, body) { lane in laneOpened(lane) }
            if shared == max { return shared }
            return shared + drainLanes(max: max - shared, runs)
        case .custom: return withCustomQueue { calls, queue in calls.drain(queue, max, body) }
        }
    }

    /// Whether the queue looks empty to a thread that is not its consumer
    /// (the runner's re-check after going idle, when another runner may
    /// already own the queue): reads only what producers write.
    var queueLooksEmpty: Bool {
        switch queueTag {
        case .lockFree: lockFreeQueue!.looksEmpty && !lanesLookRunnable
        case .custom: withCustomQueue { calls, queue in calls.looksEmpty(queue) }
        }
    }

    /// Runner only (reads the consumer's private batch).
    var queueIsEmpty: Bool {
        assertOnRunner()
        return switch queueTag {
        case .lockFree: lockFreeQueue!.isEmpty && !lanesLookRunnable
        case .custom: withCustomQueue { calls, queue in calls.isEmpty(queue) }
        }
    }

    /// `drainQueue` on a bounded loop: each event of the shared queue frees
    /// its slot before it is reduced (the capacity counts events waiting,
    /// not the one being reduced), then the lanes' runs; the producers
    /// waiting for space hear of it. When the reduction may block (an
    /// inline feedback or an observer may emit into another full `.block`
    /// loop), each freed slot is announced before it, with a fenced
    /// notify; otherwise once after the run. Runner only.
    @inline(never)
    private func drainBounded(
        _ bound: BoundedAdmission, max: Int,
        _ body: (UnsafeMutableRawPointer) -> Void, runs: (UnsafeMutableRawPointer, Int) -> Void
    ) -> Int {
        let reductionMayBlock = runner.hasInlineWorkers || hub != nil
        let shared = lockFreeQueue!.drain(max: max, { payload in
            bound.free()
            if reductionMayBlock { bound.wakeWaiting() } else { bound.freedLook() }
            body(payload)
        }, marker: { lane in laneOpened(lane) })
        let laned = shared == max ? 0 : drainLanes(max: max - shared, runs)
        if shared + laned > 0 { bound.wakeWaiting() }
        return shared + laned
    }

    /// Calls `body` with the custom queue's calls and the queue itself, and
    /// no retain of either (the loop keeps both; see `CustomQueueCalls`).
    @inline(__always)
    func withCustomQueue<Result>(_ body: (CustomQueueCalls<Event>, AnyObject) -> Result) -> Result {
        customCalls!._withUnsafeGuaranteedRef { calls in calls.withQueue { queue in body(calls, queue) } }
    }
}
