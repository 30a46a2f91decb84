internal import Atomics

// `settled()`: wait until every event accepted before the call is reduced
// and its state handed to the feedbacks that run in the slice.
//
// The call registers under the completion lock and sets `settlePending`
// (then wakes the loop). The runner takes the registered calls at the start
// of a slice, under the same lock: every emit that returned `.accepted`
// before a call happened before that lock, so its event is visible to the
// slice's dequeues (on a lane too: the lock orders the lane's publish before
// the runner's reads). The calls are resumed when a slice ends drained with
// the queue seen empty — not merely `.drained`: an event whose enqueue
// completed behind a producer still linking its node is not yet visible,
// and the next slice, which that producer's wake schedules, resumes them.
extension LoopCore {
    /// Waits until every event accepted before the call is reduced and
    /// delivered to the loop's in-slice feedbacks; at once on a stopped loop.
    /// Any thread; never blocks one.
    func settle() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let registered = completion.withLock { completion -> Bool in
                guard completion.report == nil else { return false }
                completion.settleWaiters.append(continuation)
                return true
            }
            guard registered else { return continuation.resume() }
            // The Dekker pair with the runner's idle re-check (`visibleWork`
            // reads the flag after its idle store).
            words.settlePending.store(true, ordering: .sequentiallyConsistent)
            wake()
        }
    }

    /// A slice while `settled()` calls wait: takes the calls registered so
    /// far, runs the slice, and resumes the taken calls once it ends with
    /// the queue empty (or the loop finished). Runner only.
    func sliceSettling(budget: Int) -> SliceOutcome {
        assertOnRunner()
        if words.settlePending.load(ordering: .relaxed) {
            let taken = completion.withLock { completion in
                // Cleared under the lock: a call registered after this
                // sets it again.
                words.settlePending.store(false, ordering: .relaxed)
                let taken = completion.settleWaiters
                completion.settleWaiters = []
                return taken
            }
            runner.settling.append(contentsOf: taken)
        }
        let outcome = slice(budget: budget)
        switch outcome {
        case .drained where queueIsEmpty && runner.reentrant.isEmpty, .finished:
            let resumed = runner.settling
            runner.settling = []
            for waiter in resumed { waiter.resume() }
        case .drained, .more:
            break
        }
        return outcome
    }
}
