internal import Atomics
internal import CSpindle

// Emitting: the gate, the lanes' slow path, batches, a bounded queue's
// overflow policies, and the emits of effects and of the runner itself.
extension LoopCore {
    /// Accepts `event` for reduction, or says why not. Any thread. (An emit
    /// on the calling thread's lane usually never gets here:
    /// `SpinLoop.emit` takes its inlined lane fast path first.)
    @usableFromInline
    func emit(_ event: Event) -> EmitResult {
        if isOnRunner { return emitOnRunner(event) }
        if queueTag == .lockFree {
            var shouldOpen = false
            if let lane = spindle_lane_lookup(loopID, Lanes.streak, &shouldOpen) {
                if let result = emitOnLane(lane, event) { return result }
            } else if shouldOpen {
                let result = emitThroughGate(event)
                if result == .accepted { openLane() }
                return result
            }
        }
        return emitThroughGate(event)
    }

    /// An emit from the loop's own executor's serial context, which the
    /// caller knows it is on (SpindleNIO's handler: NIO calls
    /// `channelRead` on the channel's event loop): the in-place path. On
    /// an idle loop whose queue is empty, with the default unbounded queue
    /// and no observer nor reduction gate, and outside every slice of this
    /// thread, the event is reduced here and now: the direct path's take
    /// (CAS `idle → running` inside the gate section, after the load of
    /// `closed` and the empty queue's), then a first slice that reduces
    /// this event and publishes its state (`sliceInPlace`), then the
    /// scheduling's usual end. It skips what the direct path pays for not
    /// knowing where it runs: the runner check, the lane lookup, the
    /// executor's context check, the runner's own queue, the shared
    /// queue's drain. Anything else is `emit(_:)`. Only on the executor's
    /// serial context: elsewhere an idle loop would run on the calling
    /// thread, beside the executor's own work (debug builds trap).
    func emitOnOwnExecutor(_ event: Event) -> EmitResult {
        // `executorMayRunHere`: an enqueuing executor with a context check
        // (the others never run a loop in an emit); then the loop's kind.
        // `spindle_thread_in_slice`: this thread runs no slice (of this
        // loop, or of another that would wait for this one's).
        guard executorMayRunHere, queueTag == .lockFree, bound == nil, hub == nil, reductionGate == nil,
              !spindle_thread_in_slice() else { return emit(event) }
        assert(executor.runsHere(), "Spindle: an emit on the loop's own executor came from elsewhere")
        spindle_gate_enter()
        // Relaxed: the grace period orders stop's store against this load.
        if closed.load(ordering: .relaxed) {
            spindle_gate_exit()
            return rejectAfterStop(event)
        }
        // The direct path's take (PROTOCOL.md): the queue empty, then the
        // loop idle; the CAS makes this thread the runner.
        guard queueLooksEmpty, takeToRunHere(contextKnown: true) else {
            spindle_gate_exit()
            return emit(event)
        }
        spindle_gate_exit()
        countRunInPlace(words.directRuns)
        runTakenHere(firstSlice: { self.sliceInPlace(event) })
        return .accepted
    }

    /// An emit that never takes a lane: effect runs and effect routes,
    /// whose emits may come from different threads one after the other (a
    /// task that hops threads, a serial queue's work items) and must still
    /// be reduced in order — which the shared queue's linearizable enqueue
    /// keeps and per-thread lanes would not (LANES.md). Any thread.
    func emitInOrderAcrossThreads(_ event: Event) -> EmitResult {
        if isOnRunner { return emitOnRunner(event) }
        return emitThroughGate(event)
    }

    /// Counts a scheduling that an emit runs on the loop's own executor
    /// (`SpinLoop.runsInPlace`). Only the emit that took the loop calls it,
    /// so a load and a store, no read-modify-write.
    @inline(__always)
    func countRunInPlace(_ counter: UnsafeAtomic<Int>) {
        counter.store(counter.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
    }

    /// An emit through the gate and the shared queue (bounded or not). Any thread
    /// but the runner.
    @inline(__always)
    private func emitThroughGate(_ event: Event) -> EmitResult {
        spindle_gate_enter()
        // Relaxed: the grace period orders stop's store against this load.
        if closed.load(ordering: .relaxed) {
            spindle_gate_exit()
            return rejectAfterStop(event)
        }
        if executorMayRunHere, queueLooksEmpty, takeToRunHere() {
            // The direct path: this thread found the shared queue empty and
            // took the idle loop on its own executor, so it is the runner.
            // The event skips the shared queue: it waits in the runner's own
            // queue and is reduced in the first slice, which this thread
            // runs once it has left its gate section. The queue must be
            // empty: a slice reduces at most a budget of its events before
            // the runner's own, and an older event of this thread must not
            // be overtaken. An event enqueued after the check comes from an
            // emit concurrent with this one: either order is an order the
            // contract allows (PROTOCOL.md, the direct path). A loop found
            // idle is not streaming: no lane for this thread yet.
            if queueTag == .lockFree { spindle_lane_reset_streak(loopID) }
            // This thread owns the loop (its CAS took it), but its slice, which
            // marks it the runner, has not begun: hence the unchecked access.
            unsafeRunnerOwned.reentrant.append(event)
            spindle_gate_exit()
            if let hub { accepted(event, hub: hub) }
            countRunInPlace(words.directRuns)
            runTakenHere()
            return .accepted
        }
        let enqueued = tryEnqueueAndWake(event, emitterMayRun: true)
        if enqueued != .full {
            spindle_gate_exit()
            if let hub { accepted(event, hub: hub) }
            if enqueued == .runHere {
                countRunInPlace(words.inlineRuns)
                runHere()
            }
            return .accepted
        }
        let result = overflow(event)
        spindle_gate_exit()
        // Observers hear of it outside the gate section (contract 9).
        if let hub { report(result, of: event, to: hub) }
        return result
    }

    /// Accepts a batch: on the default queue with one gate section, one
    /// pool CAS and one tail exchange per 128 events, and one wake; on a
    /// bounded queue with one claim per run of free slots. Any thread. The
    /// accepted events are a prefix of the batch, in order (see
    /// ``EmitBatchResult``).
    func emit(contentsOf events: UnsafeBufferPointer<Event>) -> EmitBatchResult {
        if events.isEmpty { return EmitBatchResult(accepted: 0, dropped: 0, stopped: 0) }
        if isOnRunner { return emitOnRunner(contentsOf: events) }
        if queueTag == .lockFree {
            var shouldOpen = false
            if let lane = spindle_lane_lookup(loopID, Lanes.streak, &shouldOpen) {
                if let result = emitOnLane(lane, contentsOf: events) { return result }
            } else if shouldOpen {
                let result = emitThroughGate(contentsOf: events)
                if result.accepted == events.count { openLane() }
                return result
            }
        }
        return emitThroughGate(contentsOf: events)
    }

    /// A batch through the gate and the shared queue (bounded or not).
    func emitThroughGate(contentsOf events: UnsafeBufferPointer<Event>) -> EmitBatchResult {
        spindle_gate_enter()
        if closed.load(ordering: .relaxed) {
            spindle_gate_exit()
            return rejectAfterStop(events[...])
        }
        let woke: WakeOutcome
        switch queueTag {
        case .lockFree:
            if bound != nil { return emitBoundedThroughGate(contentsOf: events) }
            lockFreeQueue!.enqueue(contentsOf: events)
            // After the tail exchange, a full barrier (see tryEnqueueAndWake).
            woke = wake(emitterMayRun: true)
            spindle_gate_exit()
        case .custom:
            withCustomQueue { calls, queue in calls.enqueueContentsOf(queue, events) }
            atomicMemoryFence(ordering: .sequentiallyConsistent)
            woke = wake(emitterMayRun: true)
            spindle_gate_exit()
        }
        if let hub { for event in events { accepted(event, hub: hub) } }
        if woke == .runHere { runHere() }
        return EmitBatchResult(accepted: events.count, dropped: 0, stopped: 0)
    }

    // A bounded loop's batch through its shared queue: claim what is free
    // of the shared share, then apply the policy to the rest. Called inside
    // the emit's gate section; leaves it. Observers hear of each part of the
    // batch after the section is left (contract 9): the accepted prefix,
    // then the dropped or rejected rest.
    private func emitBoundedThroughGate(contentsOf events: UnsafeBufferPointer<Event>) -> EmitBatchResult {
        let bound = bound!
        var accepted = 0
        var result: EmitBatchResult
        // Only a batch that fits at once may run the loop here: a `.block`
        // batch that waits for room needs another thread to make it.
        var runsHere = false
        while true {
            let claimed = bound.tryClaim(upTo: events.count - accepted)
            if claimed > 0 {
                lockFreeQueue!.enqueue(contentsOf: UnsafeBufferPointer(rebasing: events[accepted..<accepted + claimed]))
                // After the tail exchange, a full barrier (see tryEnqueueAndWake).
                if wake(emitterMayRun: claimed == events.count) == .runHere { runsHere = true }
                accepted += claimed
            }
            if accepted == events.count {
                spindle_gate_exit()
                result = EmitBatchResult(accepted: accepted, dropped: 0, stopped: 0)
                break
            }
            guard bound.policy == .block else {
                // .dropNewest: the rest of the batch is dropped.
                spindle_gate_exit()
                counters.dropped.wrappingIncrement(by: events.count - accepted, ordering: .relaxed)
                result = EmitBatchResult(accepted: accepted, dropped: events.count - accepted, stopped: 0)
                break
            }
            // .block: wait, then claim again, unless the loop closed meanwhile.
            guard waitForSpaceOutsideGate() else {
                spindle_gate_exit()
                counters.rejectedAfterStop.wrappingIncrement(by: events.count - accepted, ordering: .relaxed)
                result = EmitBatchResult(accepted: accepted, dropped: 0, stopped: events.count - accepted)
                break
            }
        }
        if let hub { report(result, of: events[...], to: hub) }
        if runsHere { runHere() }
        return result
    }

    // The runner's own batch goes to its local deque, as single emits do.
    private func emitOnRunner(contentsOf events: UnsafeBufferPointer<Event>) -> EmitBatchResult {
        if closed.load(ordering: .relaxed) { return rejectAfterStop(events[...]) }
        for event in events {
            runner.reentrant.append(event)
            if let hub { accepted(event, hub: hub) }
        }
        return EmitBatchResult(accepted: events.count, dropped: 0, stopped: 0)
    }

    private func rejectAfterStop(_ events: Slice<UnsafeBufferPointer<Event>>) -> EmitBatchResult {
        counters.rejectedAfterStop.wrappingIncrement(by: events.count, ordering: .relaxed)
        if let hub { for event in events { hub.eventRejected(event) } }
        return EmitBatchResult(accepted: 0, dropped: 0, stopped: events.count)
    }

    // An observed loop's accepted event: counted for the queue depth, and
    // reported to the per-event observers.
    func accepted(_ event: Event, hub: ObserverHub<State, Event>) {
        acceptedCount.wrappingIncrement(ordering: .relaxed)
        if hub.wantsEachEvent { hub.eventAccepted(event) }
    }

    func rejectAfterStop(_ event: Event) -> EmitResult {
        counters.rejectedAfterStop.wrappingIncrement(ordering: .relaxed)
        hub?.eventRejected(event)
        return .stopped
    }

    /// Tells the observers what an emit did with `event`. Called with no
    /// lock held and outside every gate section (contract 9).
    func report(_ result: EmitResult, of event: Event, to hub: ObserverHub<State, Event>) {
        switch result {
        case .accepted: accepted(event, hub: hub)
        case .dropped: hub.eventDropped(event)
        case .stopped: hub.eventRejected(event)
        }
    }

    /// Tells the observers what a batch emit did with `events`: its
    /// accepted prefix, then the rest, dropped or refused (a batch result
    /// has one or the other). Called with no lock held and outside every
    /// gate section (contract 9).
    func report(_ result: EmitBatchResult, of events: Slice<UnsafeBufferPointer<Event>>, to hub: ObserverHub<State, Event>) {
        let accepted = events.startIndex + result.accepted
        for event in events[..<accepted] { self.accepted(event, hub: hub) }
        for event in events[accepted...] {
            if result.dropped > 0 { hub.eventDropped(event) } else { hub.eventRejected(event) }
        }
    }

    /// An emit from an effect: false (and counted) unless accepted.
    @discardableResult
    func emitFromEffect(_ event: Event) -> Bool {
        emitInOrderAcrossThreads(event) == .accepted
    }

    // The runner never waits on its own queue: its events go to a local
    // deque reduced before the next batch, so a full bounded queue cannot
    // deadlock it.
    private func emitOnRunner(_ event: Event) -> EmitResult {
        if closed.load(ordering: .relaxed) { return rejectAfterStop(event) }
        runner.reentrant.append(event)
        if let hub { accepted(event, hub: hub) }
        return .accepted
    }

    // A bounded loop's shared share is full: apply its policy. Called
    // inside the emit's gate section, and returns inside one; counts, but
    // leaves the observers to the caller, outside the section.
    private func overflow(_ event: Event) -> EmitResult {
        guard let bound else { preconditionFailure("Spindle: only a bounded queue can be full") }
        switch bound.policy {
        case .dropNewest:
            counters.dropped.wrappingIncrement(ordering: .relaxed)
            return .dropped
        case .block:
            while true {
                guard waitForSpaceOutsideGate() else {
                    counters.rejectedAfterStop.wrappingIncrement(ordering: .relaxed)
                    return .stopped
                }
                if bound.tryClaim() {
                    lockFreeQueue!.tryEnqueue(event)
                    wake()
                    return .accepted
                }
            }
        }
    }

    /// A `.block` emit's wait for space, called inside its gate section:
    /// leaves the section while it waits (the grace period must not wait
    /// for a producer that waits for the runner), re-enters it, and answers
    /// whether the loop is still open. Returns inside the section.
    private func waitForSpaceOutsideGate() -> Bool {
        spindle_gate_exit()
        waitForSpace()
        spindle_gate_enter()
        return !closed.load(ordering: .relaxed)
    }

    /// Waits (outside any gate section and any lock) until the bounded
    /// queue has space or the loop is closed. Wake-ups come from the runner
    /// releasing slots, and from stop; the timeout is a safety net, not the
    /// mechanism.
    ///
    /// On a pool thread (a feedback on its loop's executor emitting into
    /// this loop), the pool is told first, so that it keeps a thread free to
    /// run this loop (see `PoolCore.threadWillBlock`).
    func waitForSpace() {
        guard let bound else { return }
        waitForSpace(bound) { [closed] in bound.sharedHasRoom || closed.load(ordering: .relaxed) }
    }

    /// Waits (outside any gate section, lock and lane emit) until `room`
    /// holds; see `waitForSpace()`.
    func waitForSpace(_ bound: BoundedAdmission, until room: () -> Bool) {
        let pool = PoolCore.current
        pool?.threadWillBlock()
        bound.spaceParker.wait(spins: 200, timeoutNanoseconds: 1_000_000, until: room)
        pool?.threadDidUnblock()
    }

    /// `waitForSpace()` for a task: suspends instead of blocking its thread
    /// (which may be a cooperative thread that other tasks need).
    func waitForSpaceSuspending() async {
        guard let bound else { return }
        await bound.asyncSpaceWaiters.wait { [closed] in
            bound.sharedHasRoom || closed.load(ordering: .relaxed)
        }
    }

    /// An emit that never waits and tells no observer, for effect runs
    /// that hold a lock: `.full` instead of waiting when a `.block` bounded
    /// queue is full (the caller waits with `waitForSpace()` after releasing
    /// its lock, then retries). Counts as every emit does; the caller hands
    /// the answer to ``report(_:of:to:)`` once its lock is released.
    func emitUnreportedWithoutWaiting(_ event: Event) -> EmitAttempt {
        if isOnRunner {
            if closed.load(ordering: .relaxed) {
                counters.rejectedAfterStop.wrappingIncrement(ordering: .relaxed)
                return .stopped
            }
            runner.reentrant.append(event)
            return .accepted
        }
        spindle_gate_enter()
        defer { spindle_gate_exit() }
        if closed.load(ordering: .relaxed) {
            counters.rejectedAfterStop.wrappingIncrement(ordering: .relaxed)
            return .stopped
        }
        // The default queue is never full: its enqueue never fails. (Never
        // run here: an effect run's emit holds its lock.)
        if tryEnqueueAndWake(event, emitterMayRun: false) != .full { return .accepted }
        if case .bounded(_, .dropNewest) = options.queue {
            counters.dropped.wrappingIncrement(ordering: .relaxed)
            return .dropped
        }
        return .full
    }
}
