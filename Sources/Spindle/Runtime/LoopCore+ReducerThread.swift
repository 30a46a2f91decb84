import CSpindle
import Atomics

// The reducer thread: drain a batch, reduce each event in order, publish the
// state, hand the batch's states to feedbacks and observers; park when idle.
extension LoopCore {
    /// The reducer thread's body. Runs until the loop is closed and every
    /// accepted event is reduced (or discarded), then tears the loop down.
    func runReducerThread() {
        reducerThreadToken.store(currentThreadToken(), ordering: .relaxed)
        preconditionOnReducerThread()
        let maxBatch = options.maxBatch
        var formationPauses = 8

        // The initial state: every feedback sees it first.
        let initial = state
        hub?.loopStarted(initialState: initial)
        if hasInlineWorkers { runInlineWorkers() }
        if hasDispatchedWorkers {
            batchStates.append(initial)
            for worker in dispatchedWorkers { worker.deliver(batchStates.elements) }
            batchStates.removeAll()
        }

        while true {
            collecting = hasDispatchedWorkers || observers.isObserved.load(ordering: .relaxed)
            let reduced: Int
            if let hub {
                reduced = reduceBatchObserved(max: maxBatch, hub: hub)
            } else {
                reduced = drainQueue(max: maxBatch) { payload in reduce(movingFrom: payload) }
                    + reduceReentrant(max: maxBatch)
                if reduced > 0 || observers.hasPending.load(ordering: .relaxed) {
                    publish()
                }
            }
            // Checked after every batch, so a discarding stop takes effect
            // promptly; a draining stop reduces the rest in finish().
            if closed.load(ordering: .acquiring) { break }
            if reduced > 0 {
                // A small batch means the reducer keeps up with its
                // producers: taking the next one at once would bounce the
                // queue's cache lines between cores for every event or two.
                // Wait without touching shared memory so a batch can form:
                // the wait doubles while batches stay under 32 events (up to
                // 256 pauses, ~4.4 us here), halves when they pass 256, and
                // starts again at 8 pauses (~140 ns) after the queue ran dry.
                // An isolated event (low rates) finds the queue dry next
                // time, so it never waits more than the first step. Measured
                // on a quiet machine, reduce-1p: ring 10.6 -> 14.5 M/s,
                // baseline 4.7 -> 10.9 M/s (a fixed ~270 ns wait before).
                if reduced < 32 {
                    formationPauses = Swift.min(formationPauses &* 2, 256)
                } else if reduced > 256 {
                    formationPauses = Swift.max(formationPauses / 2, 16)
                }
                for _ in 0..<formationPauses { spindle_cpu_relax() }
                continue
            }
            formationPauses = 8
            // Finished nodes go back to the pool in chains of 64 or more;
            // the rest only before the thread sleeps. Flushing each time the
            // queue ran dry pushed a node or two per round trip in
            // feedback-loop, bouncing the free list's line between the
            // reducer and the feedback's emits.
            parker.wait(
                spins: options.spinsBeforeParking,
                beforeSleep: { lockFreeQueue?.flushFinishedNodes() }
            ) { [closed, observers] in
                !queueIsEmpty || closed.load(ordering: .relaxed)
                    || observers.hasPending.load(ordering: .relaxed)
            }
        }
        finish()
    }

    @inline(__always)
    // `payload` holds the event; the reducer moves it out.
    private func reduce(movingFrom payload: UnsafeMutableRawPointer) {
        // Checked per event, after the event was dequeued: an observer that
        // subscribed before emitting sees the states its own events make.
        if observerBaseIndex < 0, observersPending.load(ordering: .relaxed) {
            observerBaseIndex = batchStates.count
            observerBaseState = state
            collecting = true
        }
        reduceFunction(&statePointer.pointee, payload)
        reducedCount &+= 1
        if hasInlineWorkers { runInlineWorkers() }
        if collecting { batchStates.append(statePointer.pointee) }
    }

    // Out of line on purpose: iterating the workers needs generic metadata
    // (Optional<FeedbackWorker<…>>), and inlined, the compiler fetches it at
    // the top of `reduce` for every event, inline workers or not.
    @inline(never)
    private func runInlineWorkers() {
        let current = state
        for worker in inlineWorkers { worker.runInline(current) }
    }

    // Events emitted on the reducer thread itself (inline feedbacks, gears).
    private func reduceReentrant(max: Int) -> Int {
        drainReentrant(max: max) { payload in reduce(movingFrom: payload) }
    }

    // Hands up to `max` reentrant events to `body`, which moves each out;
    // returns how many.
    @inline(__always)
    private func drainReentrant(max: Int, _ body: (UnsafeMutableRawPointer) -> Void) -> Int {
        var count = 0
        while count < max, !reentrant.isEmpty {
            reentrant.removeFirst(movingWith: body)
            count += 1
        }
        return count
    }

    // MARK: Observed loops (a spin with observers; see SpinObserver)

    // A batch as in the loop above, timed and reported to the observers;
    // with per-event observers, each event is copied before it is reduced
    // and reported with its new state. Separate from the unobserved path so
    // that path pays nothing. Returns the events reduced.
    private func reduceBatchObserved(max: Int, hub: ObserverHub<State, Event>) -> Int {
        let start = ContinuousClock.now
        var reduced: Int
        if hub.wantsEachEvent {
            reduced = drainQueue(max: max) { payload in reduceReporting(movingFrom: payload, to: hub) }
            reduced += drainReentrant(max: max - reduced) { payload in reduceReporting(movingFrom: payload, to: hub) }
        } else {
            reduced = drainQueue(max: max) { payload in reduce(movingFrom: payload) }
                + reduceReentrant(max: max)
        }
        if reduced > 0 || observers.hasPending.load(ordering: .relaxed) {
            publish()
        }
        if reduced > 0 {
            let depth = acceptedCount.load(ordering: .relaxed) &- reducedCount
            hub.batchReduced(ReductionBatch(
                events: reduced, totalReduced: reducedCount,
                queueDepth: Swift.max(depth, 0), duration: ContinuousClock.now - start))
        }
        return reduced
    }

    @inline(never)
    private func reduceReporting(movingFrom payload: UnsafeMutableRawPointer, to hub: ObserverHub<State, Event>) {
        let event = payload.assumingMemoryBound(to: Event.self).pointee
        reduce(movingFrom: payload)
        hub.eventReduced(event, newState: state, reduction: reducedCount)
    }

    // A discarding stop throws `payload`'s event away, telling the observers.
    private func throwAway(movingFrom payload: UnsafeMutableRawPointer) {
        let event = payload.assumingMemoryBound(to: Event.self).move()
        hub?.eventDiscardedAtStop(event)
    }

    // End of a batch: the snapshot, the counters, feedbacks, observers.
    private func publish() {
        snapshot.publish(state)
        counters.reduced.store(reducedCount, ordering: .releasing)
        if hasDispatchedWorkers {
            for worker in dispatchedWorkers { worker.deliver(batchStates.elements) }
        }
        if observers.isObserved.load(ordering: .relaxed) {
            if observerBaseIndex < 0 {
                observers.deliver(batchStates.elements, pendingFrom: batchStates.count, firstState: state)
            } else {
                observers.deliver(batchStates.elements, pendingFrom: observerBaseIndex, firstState: observerBaseState)
            }
        }
        observerBaseIndex = -1
        batchStates.removeAll()
    }

    // The gate is closed. Wait for a grace period: afterwards every emit that
    // missed `closed` has enqueued, and no later emit enqueues. Then reduce
    // or discard what is queued, stop the workers, end the observers and
    // report. Producers blocked on a full ring wait outside the gate; they
    // are woken to see `closed`.
    private func finish() {
        let discard = stopMode.load(ordering: .relaxed) == 2
        var discarded = 0
        ringQueue?.spaceParker.notify()
        spindle_gate_wait_for_emitters()
        while true {
            collecting = hasDispatchedWorkers || observers.isObserved.load(ordering: .relaxed)
            var handled = 0
            if discard {
                handled = drainQueue(max: .max) { payload in throwAway(movingFrom: payload) }
                handled += drainReentrant(max: .max) { payload in throwAway(movingFrom: payload) }
                discarded += handled
            } else if let hub {
                handled = reduceBatchObserved(max: options.maxBatch, hub: hub)
            } else {
                handled = drainQueue(max: options.maxBatch) { payload in reduce(movingFrom: payload) }
                handled += reduceReentrant(max: options.maxBatch)
                if handled > 0 { publish() }
            }
            // Nothing is added any more (emits see `closed`, reducer-thread
            // emits too): an empty drain means done.
            if handled == 0 { break }
        }
        counters.discardedAtStop.store(discarded, ordering: .relaxed)
        snapshot.publish(state)
        counters.reduced.store(reducedCount, ordering: .releasing)

        for worker in dispatchedWorkers + inlineWorkers + attachedWorkers { worker.stop() }
        observers.finish(final: state)
        // Break the worker -> core cycles; runs still finishing keep their
        // worker (and so this core) alive only until they return.
        dispatchedWorkers = []
        inlineWorkers = []
        attachedWorkers = []
        batchStates.removeAll()
        hasDispatchedWorkers = false
        hasInlineWorkers = false
        let report = StopReport(reduced: reducedCount, discarded: discarded)
        complete(with: report)
    }
}
