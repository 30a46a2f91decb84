internal import Atomics
internal import CSpindle

/// A loop's stop request: none yet, or the first request's mode.
enum StopRequest: UInt8, AtomicValue, Sendable {
    case none
    case drain
    case discard
}

// Stopping: close the gate, wait for the grace period off every executor
// thread (on Spindle's grace thread), then let the loop's last slice drain and
// finish on its own executor.
extension LoopCore {
    /// Closes the gate and starts the grace period, once. Any thread; runs
    /// no user code and never blocks.
    func requestStop(_ mode: StopMode) {
        let request: StopRequest = mode == .discardPending ? .discard : .drain
        guard stopRequest.compareExchange(expected: .none, desired: request, ordering: .sequentiallyConsistent).exchanged
        else { return }
        closed.store(true, ordering: .sequentiallyConsistent)
        bound?.wakeWaiting()
        // The callback holds the loop until it has run (and scheduled the
        // final slice, whose executor holds it from then on).
        _ = Unmanaged.passRetained(self)
        spindle_task_after_grace_period(task) { context in
            let loop = Unmanaged<ScheduledLoop>.fromOpaque(context!).takeRetainedValue()
            loop.gracePeriodEnded()
        }
        // A discarding stop takes effect promptly: the next slice throws the
        // queued events away, without waiting for the grace period.
        if request == .discard { wake() }
    }

    /// The grace period has passed: the last slice may drain and finish.
    func graceEnded() {
        graceDone.store(true, ordering: .sequentiallyConsistent)
        wake()
    }

    /// Stops the loop and waits until its last slice has run. Never blocks
    /// the calling thread.
    func stop(_ mode: StopMode) async -> StopReport {
        requestStop(mode)
        return await withCheckedContinuation { (continuation: CheckedContinuation<StopReport, Never>) in
            let report: StopReport? = completion.withLock { completion in
                if let report = completion.report { return report }
                completion.waiters.append(continuation)
                return nil
            }
            if let report { continuation.resume(returning: report) }
        }
    }

    /// The loop was released without stop: stop it (with drain) in the
    /// background; its executor lets it go after the last slice.
    func releaseWithoutStop() {
        requestStop(.drain)
    }

    /// Called by the last slice (or by a loop that never started): publishes
    /// the report, ends the `states` streams after `finalState`, and resumes
    /// every waiting stop.
    func complete(with report: StopReport, finalState: State) {
        hub?.loopStopped(report)
        let (waiters, settleWaiters, observers) = completion.withLock { completion in
            completion.report = report
            let waiters = completion.waiters
            let settleWaiters = completion.settleWaiters
            completion.waiters = []
            completion.settleWaiters = []
            return (waiters, settleWaiters, self.observers)
        }
        observers?.finish(final: finalState)
        for waiter in settleWaiters { waiter.resume() }
        for waiter in waiters { waiter.resume(returning: report) }
    }

    var isStopped: Bool { completion.withLock { $0.report != nil } }
}
