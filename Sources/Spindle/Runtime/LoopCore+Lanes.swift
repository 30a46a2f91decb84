internal import Atomics
internal import CSpindle

/// Per-producer lanes on the default queue: a thread that emits into one
/// loop `Lanes.streak` times in a row without finding it idle gets a
/// single-producer lane of its own (`spindle_lane`), announced by a marker
/// in the shared queue; its emits then cost a slot write and plain stores,
/// no locked instruction. The protocol is `Scheduling/Model/LANES.md`
/// ("v2, as built"), model-checked by `lanes.pml` beside it.
enum Lanes {
    /// Emits in a row from one thread into one loop that earn a lane
    /// (`LaneTuning.streak`; 64 unless a test changed it). A C global, not
    /// a Swift one: every emit reads it, and a Swift global with an
    /// allocating initializer goes through the runtime's lazy initializer,
    /// whose lock the first emits of a process, racing from many threads,
    /// queue on (see `spindle_lane_streak`).
    static var streak: UInt32 {
        @inline(__always) get { spindle_lane_streak() }
    }
    /// Events per block of a lane.
    static let slotsPerBlock = 64

    /// A new loop identity for the threads' lane tables: never reused (an
    /// address may be). A C global, as `streak`.
    static func nextLoopID() -> UInt64 { spindle_lane_next_loop_id() }
}

/// What `SpinLoop.emit`'s inlined lane fast path needs of its loop, copied
/// out once at start so that the caller reads plain fields: the loop's
/// identity in the threads' lane tables, where its hot words are (the C
/// fast path reads the runner token, the scheduling state and `closed`
/// there), and whether it is observed. The words live as long as the loop's
/// core, which the `SpinLoop` holding this keeps.
@usableFromInline
struct LaneEmitKey: @unchecked Sendable {
    // @unchecked: `words` points at atomics, read only through C atomics.
    @usableFromInline let loopID: UInt64
    @usableFromInline let words: UnsafeRawPointer
    @usableFromInline let observed: Bool
}

/// For tests and benchmarks (`@_spi(Tuning) import Spindle`): how many
/// emits in a row through the shared queue earn a thread a lane into a
/// loop. 1 gives every emitting thread a lane at once (the stress suite's
/// lane cases); `UInt32.max` never does. Process-wide; read at each emit.
@_spi(Tuning) public enum LaneTuning {
    public static var streak: UInt32 {
        get { spindle_lane_streak() }
        set { spindle_lane_set_streak(Swift.max(1, newValue)) }
    }
}

extension LoopCore {
    // MARK: Producer side

    /// The key of `SpinLoop.emit`'s inlined fast path (see
    /// `spindle_lane_fast_reserve` and `spindle_lane_fast_publish`).
    var laneEmitKey: LaneEmitKey {
        LaneEmitKey(loopID: loopID, words: words.address, observed: hub != nil)
    }

    /// An event accepted on a lane, for the observers.
    @usableFromInline
    func acceptedOnLane(_ event: Event) {
        if let hub { accepted(event, hub: hub) }
    }

    /// An emit on the calling thread's lane into this loop (the path
    /// `spindle_lane_fast_reserve` declined, and the emitters other than `SpinLoop`);
    /// nil when memory ran out for a new block, and the caller emits through
    /// the shared queue instead.
    @inline(__always)
    func emitOnLane(_ lane: OpaquePointer, _ event: Event) -> EmitResult? {
        while true {
            guard beginLaneEmit(lane) else { return rejectAfterStop(event) }
            guard let slot = spindle_lane_slot(lane) else {
                spindle_lane_abort(lane)
                // Full (as of the count the slot call read), or out of memory.
                guard let bound, spindle_lane_was_full(lane) else { return nil }
                if let result = laneIsFull(lane, bound, event) { return result }
                continue
            }
            slot.initializeMemory(as: Event.self, to: event)
            spindle_lane_publish(lane, 1)
            let runsHere = wakeAfterLaneEmit(lane)
            if let hub { accepted(event, hub: hub) }
            if runsHere { runHere() }
            return .accepted
        }
    }

    /// A bounded loop's lane is full (its share of the capacity): under
    /// `.dropNewest` the event is dropped (counted and reported); under
    /// `.block` the thread waits until the runner has taken some of the
    /// lane's events, or the loop closed, and answers nil: emit again (the
    /// next emit sees `closed`). Outside the lane emit.
    @inline(never)
    private func laneIsFull(_ lane: OpaquePointer, _ bound: BoundedAdmission, _ event: Event) -> EmitResult? {
        switch bound.policy {
        case .dropNewest:
            counters.dropped.wrappingIncrement(ordering: .relaxed)
            hub?.eventDropped(event)
            return .dropped
        case .block:
            waitForLaneRoom(lane, bound)
            return nil
        }
    }

    /// Waits until the runner has taken some of `lane`'s events, or the
    /// loop closed. Outside the lane emit. The lane holds events (it is
    /// full), so the loop is scheduled: its runner notifies the parker
    /// after it takes events from lanes.
    private func waitForLaneRoom(_ lane: OpaquePointer, _ bound: BoundedAdmission) {
        waitForSpace(bound) { [closed] in spindle_lane_has_room(lane) || closed.load(ordering: .relaxed) }
    }

    /// After a publish on `lane`: schedules the loop if it was idle, and
    /// the let-go bookkeeping of a lane whose loop idles between its emits.
    /// This may read the scheduling state before the publish is visible:
    /// the runner's re-check counts BUSY lanes after a membarrier
    /// (LANES.md). `SpinLoop.emit`'s inlined fast path calls it when its
    /// publish found the loop idle or queued. True when the caller must run
    /// the loop (`runHere()`, the inline fast path), after it has reported
    /// the event to the observers.
    @usableFromInline
    func wakeAfterLaneEmit(_ lane: OpaquePointer) -> Bool {
        // A loop that idles between this thread's emits (each idle
        // transition costs its runner a membarrier) goes back to the shared
        // queue once the lane's events are reduced.
        let woke = wake(emitterMayRun: true)
        if woke != .notScheduled { spindle_lane_note_idle(loopID, lane) }
        return woke == .runHere
    }

    /// `runHere()` for `SpinLoop.emit`'s inlined fast path.
    @usableFromInline
    func runAfterLaneEmit() {
        countRunInPlace(words.inlineRuns)
        runHere()
    }

    /// A batch on the calling thread's lane: one BUSY store, one publish
    /// (one of each per wait, on a bounded loop whose lane fills up). nil
    /// when the loop is closed before any event is accepted (the shared
    /// path then counts the rejection).
    func emitOnLane(_ lane: OpaquePointer, contentsOf events: UnsafeBufferPointer<Event>) -> EmitBatchResult? {
        var written = 0
        var dropped = 0
        var stopped = 0
        var runsHere = false
        var outOfMemory = false
        while true {
            guard beginLaneEmit(lane) else {
                // Closed while a `.block` batch waited for room.
                if written == 0 { return nil }
                stopped = events.count - written
                counters.rejectedAfterStop.wrappingIncrement(by: stopped, ordering: .relaxed)
                break
            }
            let start = written
            var count = 0
            while written < events.count,
                  let slots = spindle_lane_slots(lane, written - start, events.count - written, &count) {
                slots.assumingMemoryBound(to: Event.self)
                    .initialize(from: events.baseAddress! + written, count: count)
                written += count
            }
            spindle_lane_publish(lane, written - start)
            // Only a batch written whole at once may run the loop here: the
            // rest of one cut short goes through the shared queue first, or
            // waits for room that another thread must make.
            if written > start, wake(emitterMayRun: start == 0 && written == events.count) == .runHere {
                runsHere = true
            }
            if written == events.count { break }
            guard let bound, spindle_lane_was_full(lane) else {
                outOfMemory = true
                break
            }
            if bound.policy == .dropNewest {
                dropped = events.count - written
                counters.dropped.wrappingIncrement(by: dropped, ordering: .relaxed)
                break
            }
            waitForLaneRoom(lane, bound)
        }
        if let hub {
            report(EmitBatchResult(accepted: written, dropped: dropped, stopped: stopped),
                   of: events[..<(written + dropped + stopped)], to: hub)
        }
        if runsHere { runHere() }
        if outOfMemory {
            // Memory ran out mid-batch: the rest goes through the shared queue.
            let rest = emitThroughGate(contentsOf: UnsafeBufferPointer(rebasing: events[written...]))
            return EmitBatchResult(accepted: written + rest.accepted, dropped: rest.dropped, stopped: rest.stopped)
        }
        return EmitBatchResult(accepted: written, dropped: dropped, stopped: stopped)
    }

    // Starts an emit on a lane, unless the loop is closed (false, the emit
    // ended): the step every lane emit starts with (spindle_lane.h).
    @inline(__always)
    private func beginLaneEmit(_ lane: OpaquePointer) -> Bool {
        spindle_lane_begin_unless_closed(lane, words.address)
    }

    /// Opens a lane for the calling thread, whose last emit (through the
    /// shared queue) was accepted: the marker goes through the gate after
    /// it, so the runner reads the lane only after that event.
    /// On a bounded loop the lane takes one of the loop's lane tickets,
    /// and its share of the capacity; with none left, the thread goes on
    /// through the shared queue.
    @inline(never)
    func openLane() {
        if let bound, !bound.takeLaneTicket() { return }
        guard let lane = spindle_lane_create(
            loopID, MemoryLayout<Event>.size, MemoryLayout<Event>.alignment, Lanes.slotsPerBlock)
        else {
            bound?.returnLaneTicket()
            return
        }
        if let bound { spindle_lane_set_budget(lane, UInt32(bound.laneBudget)) }
        spindle_gate_enter()
        guard !closed.load(ordering: .relaxed), lockFreeQueue!.enqueueMarker(lane) else {
            spindle_gate_exit()
            spindle_lane_destroy(lane)
            bound?.returnLaneTicket()
            return
        }
        // The enqueue is an exchange (a full barrier), as for an event.
        wake()
        spindle_gate_exit()
        // The marker is queued: the lane belongs to the loop's runner too
        // now, so a failed install only lets it go.
        if !spindle_lane_install(lane) { spindle_lane_let_go(lane) }
    }

    // MARK: Runner side

    /// A marker was reduced: the runner reads its lane from now on.
    func laneOpened(_ lane: OpaquePointer) {
        assertOnRunner()
        if !spindle_lane_set_add_consumer(laneSet!, lane) {
            // Out of memory: the lane cannot be read, so its events would be
            // lost; there is no way to refuse them after the fact.
            fatalError("Spindle: out of memory adding a producer lane")
        }
    }

    /// Hands up to `max` events waiting in the lanes to `runs`, lane by
    /// lane, each in order, a run of adjacent payloads at a time (which
    /// `runs` moves out). Runner only.
    @inline(__always)
    func drainLanes(max: Int, _ runs: (UnsafeMutableRawPointer, Int) -> Void) -> Int {
        guard let set = laneSet else { return 0 }
        let lanes = spindle_lane_set_count_consumer(set)
        if lanes == 0 { return 0 }
        var total = 0
        var index = 0
        while index < lanes, total < max {
            let lane = spindle_lane_set_at_consumer(set, index)!
            if spindle_lane_available_consumer(lane) > 0 {
                var count = 0
                while total < max, let first = spindle_lane_run_consumer(lane, max - total, &count) {
                    runs(first, count)
                    spindle_lane_consumed(lane, count)
                    total += count
                }
            }
            index += 1
        }
        return total
    }

    /// Runner only: a lane holds a published event not yet taken. A hint
    /// (no fence, BUSY not read: reading it would pull each producer's line
    /// away from it once per linger): for the runner's linger, not for a
    /// decision a lost event would follow from.
    var lanesHaveWork: Bool {
        guard let set = laneSet else { return false }
        return spindle_lane_set_has_published_consumer(set)
    }

    /// Any thread (the re-check after going idle, the stop's last slice):
    /// as `lanesHaveWork`, after the heavy side of the asymmetric fence, so
    /// that every producer's BUSY store or publish made before the caller's
    /// store is seen (LANES.md, "v2, as built").
    var lanesLookRunnable: Bool {
        guard let set = laneSet else { return false }
        return spindle_lane_set_looks_runnable(set, true)
    }

    /// At a slice's end: frees the lanes whose threads let go, once
    /// drained. Runner only.
    func reclaimLanes() {
        guard let set = laneSet else { return }
        var index = spindle_lane_set_count_consumer(set)
        while index > 0 {
            index -= 1
            let lane = spindle_lane_set_at_consumer(set, index)!
            // Out of memory for the smaller list: the lane stays listed
            // (and allocated) until a later slice's end manages it.
            if spindle_lane_reclaim_consumer(lane), spindle_lane_set_remove_consumer(set, index) {
                spindle_lane_destroy_deferred(lane)
                bound?.returnLaneTicket()
            }
        }
    }

    /// The loop is going away: deinitializes what is left in its lanes and
    /// lets every lane go (its threads free theirs).
    func releaseLanes() {
        guard let set = laneSet else { return }
        let lanes = spindle_lane_set_count_consumer(set)
        for index in 0..<lanes {
            let lane = spindle_lane_set_at_consumer(set, index)!
            _ = spindle_lane_available_consumer(lane)
            while let payload = spindle_lane_next_consumer(lane) {
                payload.assumingMemoryBound(to: Event.self).deinitialize(count: 1)
            }
        }
        spindle_lane_set_deinit(set)
    }
}
