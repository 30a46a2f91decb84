import CSpindle
import Foundation
import Synchronization
import Testing
import SpindleTestSupport

/// One emit on a lane as the engine does it (LANES.md): begin, slot,
/// write, publish. (The engine reads the loop's `closed` after begin.)
private func laneEmit(_ lane: OpaquePointer, _ value: Int) throws -> Bool {
    spindle_lane_begin(lane)
    let slot = try #require(spindle_lane_slot(lane))
    slot.storeBytes(of: value, as: Int.self)
    spindle_lane_publish(lane, 1)
    return true
}

/// One batch on a lane as the engine does it: begin, runs of adjacent
/// slots (each call told how many this emit took already), one publish.
/// Writes `next`, `next + 1`, … and advances `next`; returns how many slots
/// it got.
private func laneBatchEmit(_ lane: OpaquePointer, _ size: Int, from next: inout Int) -> Int {
    spindle_lane_begin(lane)
    var written = 0
    var count = 0
    while written < size, let slots = spindle_lane_slots(lane, written, size - written, &count) {
        for offset in 0..<count {
            (slots + offset * 8).storeBytes(of: next, as: Int.self)
            next += 1
        }
        written += count
    }
    spindle_lane_publish(lane, written)
    return written
}

/// Reads every published slot (the runner's side).
private func laneDrain(_ lane: OpaquePointer) -> [Int] {
    var values: [Int] = []
    _ = spindle_lane_available_consumer(lane)
    while let payload = spindle_lane_next_consumer(lane) {
        values.append(payload.load(as: Int.self))
    }
    return values
}

/// A lane id no other test uses (the thread tables are process-wide).
private let nextLoopID = Atomic<UInt64>(0x5EED_0000)
private func freshLoopID() -> UInt64 { nextLoopID.add(1, ordering: .relaxed).newValue }

/// Runs `body` on a thread of its own (the lane tables are per thread) with
/// a lane installed for a fresh loop id; returns what `body` noted as wrong,
/// or nil when the thread did not finish.
private func onThreadWithLane(
    _ name: String, _ body: @escaping @Sendable (_ loop: UInt64, _ lane: OpaquePointer, _ notes: inout [String]) -> Void
) -> [String]? {
    let result = Locked<[String]>([])
    let thread = TestThreads(1, name: name) { _ in
        var notes: [String] = []
        defer { result.withLock { $0 = notes } }
        let loop = freshLoopID()
        guard let lane = spindle_lane_create(loop, 8, 8, 4), spindle_lane_install(lane) else {
            notes.append("create or install failed")
            return
        }
        body(loop, lane, &notes)
    }
    guard thread.join() else { return nil }
    return result.withLock { $0 }
}

extension CSpindleTarget {
    @Suite("spindle_lane: per-producer lanes")
    struct LaneTests {
        @Test func eventsComeOutInOrderAcrossBlocks() throws {
            let lane = try #require(spindle_lane_create(freshLoopID(), 8, 8, 4))
            defer { spindle_lane_destroy(lane) }
            var seen: [Int] = []
            for round in 0..<5 {
                for value in 0..<(round * 7 + 1) {
                    #expect(try laneEmit(lane, round * 1000 + value))
                }
                seen += laneDrain(lane)
            }
            let expected = (0..<5).flatMap { round in (0..<(round * 7 + 1)).map { round * 1000 + $0 } }
            #expect(seen == expected)
            #expect(spindle_lane_word(lane) & SPINDLE_LANE_COUNT_MASK == UInt64(expected.count))
        }

        /// A bounded lane (issue 51) hands out no slot beyond its budget of
        /// events the runner has not taken, to single emits and batches
        /// alike; each run the runner takes gives its room back.
        @Test func aBoundedLaneStopsAtItsBudget() throws {
            let lane = try #require(spindle_lane_create(freshLoopID(), 8, 8, 4))
            defer { spindle_lane_destroy(lane) }
            spindle_lane_set_budget(lane, 6)
            for value in 0..<6 { #expect(try laneEmit(lane, value)) }
            spindle_lane_begin(lane)
            #expect(spindle_lane_slot(lane) == nil, "a seventh event past the budget")
            spindle_lane_abort(lane)
            #expect(spindle_lane_was_full(lane))
            #expect(!spindle_lane_has_room(lane))
            #expect(laneDrain(lane) == Array(0..<6))
            #expect(spindle_lane_was_full(lane), "as of the count last read")
            #expect(spindle_lane_has_room(lane))
            #expect(!spindle_lane_was_full(lane))
            var next = 6
            #expect(laneBatchEmit(lane, 10, from: &next) == 6, "a batch stops at the budget")
            #expect(laneBatchEmit(lane, 1, from: &next) == 0)
            #expect(laneDrain(lane) == Array(6..<12))
            #expect(laneBatchEmit(lane, 4, from: &next) == 4)
            #expect(try laneEmit(lane, 16))
            #expect(laneDrain(lane) == Array(12..<17))
        }

        /// Batches: runs of adjacent slots across block boundaries, one
        /// publish per batch, read back in order.
        @Test func batchesComeOutInOrderAcrossBlocks() throws {
            let lane = try #require(spindle_lane_create(freshLoopID(), 8, 8, 4))
            defer { spindle_lane_destroy(lane) }
            var next = 0
            var seen: [Int] = []
            for size in [1, 3, 4, 5, 9, 0, 2, 17] {
                #expect(laneBatchEmit(lane, size, from: &next) == size)
                seen += laneDrain(lane)
            }
            #expect(seen == Array(0..<next))
        }

        /// Single emits and batches interleaved, published without a read
        /// in between, so that both ways of taking slots (the next slot from
        /// the published count; a batch's runs after the slots it already
        /// took) cross block boundaries at every offset, and the lane grows
        /// new blocks while the runner holds back.
        @Test func singleEmitsAndBatchesInterleaveAcrossBlocks() throws {
            let lane = try #require(spindle_lane_create(freshLoopID(), 8, 8, 2))
            defer { spindle_lane_destroy(lane) }
            var next = 0
            var seen: [Int] = []
            for round in 0..<40 {
                #expect(try laneEmit(lane, next))
                next += 1
                let size = round % 7
                #expect(laneBatchEmit(lane, size, from: &next) == size)
                if round % 13 == 12 { seen += laneDrain(lane) }
            }
            seen += laneDrain(lane)
            #expect(seen == Array(0..<next))
            #expect(spindle_lane_word(lane) & SPINDLE_LANE_COUNT_MASK == UInt64(next))
        }

        /// The idle re-check's view: a lane with a producer inside an emit
        /// (BUSY) counts as work, as does a published slot not yet taken.
        @Test func aBusyOrUnreadLaneLooksRunnable() throws {
            _ = spindle_lanes_prepare()
            let lane = try #require(spindle_lane_create(freshLoopID(), 8, 8, 4))
            let memory = UnsafeMutableRawPointer.allocate(byteCount: spindle_lane_set_size(), alignment: 8)
            defer { memory.deallocate() }
            let set = try #require(spindle_lane_set_init(memory))
            #expect(spindle_lane_set_add_consumer(set, lane))
            #expect(!spindle_lane_set_looks_runnable(set, true))
            spindle_lane_begin(lane)
            #expect(spindle_lane_set_looks_runnable(set, true))
            spindle_lane_abort(lane)
            #expect(!spindle_lane_set_looks_runnable(set, true))
            #expect(try laneEmit(lane, 7))
            #expect(spindle_lane_set_looks_runnable(set, true))
            #expect(laneDrain(lane) == [7])
            #expect(!spindle_lane_set_looks_runnable(set, true))
            // The loop goes away before the lane's thread: ORPHANED, left to the thread.
            spindle_lane_set_deinit(set)
            #expect(spindle_lane_word(lane) & SPINDLE_LANE_ORPHANED != 0)
            spindle_lane_destroy(lane)
        }

        /// Out of memory for the lane list: an add reports it, and a remove
        /// reports it and keeps the lane listed (the runner then keeps the
        /// lane allocated and tries again later), the list unchanged.
        @Test func aLaneListThatCannotShrinkKeepsItsLane() throws {
            _ = spindle_lanes_prepare()
            let first = try #require(spindle_lane_create(freshLoopID(), 8, 8, 4))
            let second = try #require(spindle_lane_create(freshLoopID(), 8, 8, 4))
            defer {
                spindle_lane_destroy(first)
                spindle_lane_destroy(second)
            }
            let memory = UnsafeMutableRawPointer.allocate(byteCount: spindle_lane_set_size(), alignment: 8)
            defer { memory.deallocate() }
            let set = try #require(spindle_lane_set_init(memory))
            #expect(spindle_lane_set_add_consumer(set, first))
            spindle_lane_set_fail_allocations(1)
            #expect(!spindle_lane_set_add_consumer(set, second))
            #expect(spindle_lane_set_count_consumer(set) == 1)
            #expect(spindle_lane_set_add_consumer(set, second))
            spindle_lane_set_fail_allocations(1)
            #expect(!spindle_lane_set_remove_consumer(set, 0))
            #expect(spindle_lane_set_count_consumer(set) == 2)
            #expect(spindle_lane_set_at_consumer(set, 0) == first)
            #expect(spindle_lane_set_at_consumer(set, 1) == second)
            #expect(spindle_lane_set_remove_consumer(set, 0))
            #expect(spindle_lane_set_count_consumer(set) == 1)
            #expect(spindle_lane_set_at_consumer(set, 0) == second)
            #expect(spindle_lane_set_remove_consumer(set, 0), "the last lane needs no allocation")
            #expect(spindle_lane_set_count_consumer(set) == 0)
            spindle_lane_set_deinit(set)
        }

        /// Reclamation: a lane its thread let go is freed by the runner only
        /// once every published slot has been taken.
        @Test func aLetGoLaneIsReclaimedOnlyWhenDrained() throws {
            let lane = try #require(spindle_lane_create(freshLoopID(), 8, 8, 4))
            defer { spindle_lane_destroy(lane) }
            #expect(try laneEmit(lane, 1))
            #expect(!spindle_lane_reclaim_consumer(lane))  // its thread still holds it
            spindle_lane_let_go(lane)
            #expect(spindle_lane_word(lane) & SPINDLE_LANE_EXITED != 0)
            #expect(!spindle_lane_reclaim_consumer(lane))  // one slot not taken
            #expect(laneDrain(lane) == [1])
            #expect(spindle_lane_reclaim_consumer(lane))
        }

        /// Conservation and order between two threads, through many blocks
        /// (so the spare block goes back and forth).
        @Test func oneProducerOneConsumer() throws {
            let count = 1_000_000
            let lane = SharedHandle(raw: try #require(spindle_lane_create(freshLoopID(), 8, 8, 32)))
            let failures = Atomic<Int>(0)
            let producer = TestThreads(1, name: "lane-producer") { _ in
                for value in 0..<count {
                    guard (try? laneEmit(lane.raw, value)) == true else {
                        failures.add(1, ordering: .relaxed)
                        return
                    }
                }
            }
            var next = 0
            var idle = ConsumerIdle()
            let deadline = ContinuousClock.now + hangGuard
            while next < count, failures.load(ordering: .relaxed) == 0, ContinuousClock.now < deadline {
                if spindle_lane_available_consumer(lane.raw) == 0 {
                    idle.pause()
                    continue
                }
                while let payload = spindle_lane_next_consumer(lane.raw) {
                    let value = payload.load(as: Int.self)
                    if value != next { break }
                    next += 1
                }
            }
            #expect(producer.join())
            #expect(failures.load(ordering: .relaxed) == 0)
            #expect(next == count, "events arrived out of order or were lost: next expected \(next)")
            spindle_lane_destroy(lane.raw)
        }

        /// The thread table: a streak earns a lane, the installed lane is
        /// found again, another loop in the same slot lets it go (EXITED).
        @Test func theThreadTableOpensFindsAndLetsGo() throws {
            let result = Locked<[String]>([])
            let thread = TestThreads(1, name: "lane-table") { _ in
                var notes: [String] = []
                let loop = freshLoopID()
                var open = false
                for emit in 1...3 {
                    if spindle_lane_lookup(loop, 3, &open) != nil { notes.append("lane before install") }
                    if open != (emit == 3) { notes.append("should_open wrong at emit \(emit)") }
                }
                guard let lane = spindle_lane_create(loop, 8, 8, 4), spindle_lane_install(lane) else {
                    notes.append("create or install failed")
                    result.withLock { $0 = notes }
                    return
                }
                if spindle_lane_lookup(loop, 3, &open) != lane { notes.append("installed lane not found") }
                // The loop goes away first: ORPHANED, not freed (the thread holds it).
                if spindle_lane_release_loop(lane) { notes.append("freed while the thread held it") }
                result.withLock { $0 = notes }
                // Thread exit: the destructor finds ORPHANED and frees the lane.
            }
            #expect(thread.join())
            #expect(result.withLock { $0 } == [])
        }

        /// A loop that keeps idling between a thread's emits gets that
        /// thread's lane let go, but only once the lane's events are reduced:
        /// the emit that notes the idle loop has just published an event the
        /// runner has not taken, so the let-go waits for the next emit
        /// (before it, the fast path steps aside and the lookup decides).
        @Test func anIdlingLoopsLaneIsLetGoOnceDrained() throws {
            let notes = onThreadWithLane("lane-idle") { loop, lane, notes in
                var open = false
                // Four emits, each finding the loop idle and reduced before
                // the next (as when the producer is slower than the runner).
                for value in 0..<4 {
                    if spindle_lane_lookup(loop, 64, &open) != lane { notes.append("no lane at emit \(value)") }
                    if (try? laneEmit(lane, value)) != true { notes.append("emit \(value) failed") }
                    spindle_lane_note_idle(loop, lane)
                    if spindle_lane_word(lane) & SPINDLE_LANE_EXITED != 0 {
                        notes.append("let go at emit \(value) with its event unreduced")
                    }
                    if laneDrain(lane) != [value] { notes.append("drain after emit \(value)") }
                }
                // The fourth idle emit marked the lane: the fast path no
                // longer returns it, and the next lookup, finding it drained,
                // lets it go and sends the emit through the shared queue.
                if spindle_lane_current(loop) != nil { notes.append("the fast path still takes the lane") }
                if spindle_lane_lookup(loop, 64, &open) != nil { notes.append("a drained lane was not let go") }
                if open { notes.append("a let-go lane opened another at once") }
                if spindle_lane_word(lane) & SPINDLE_LANE_EXITED == 0 { notes.append("lane not marked EXITED") }
                // The runner's part: EXITED and drained, it frees the lane.
                if spindle_lane_reclaim_consumer(lane) {
                    spindle_lane_destroy(lane)
                } else {
                    notes.append("the runner could not reclaim the lane")
                }
            }
            #expect(notes == [])
        }

        /// A marked lane whose loop turns busy again (a window of emits none
        /// of which found it idle) is kept, and the fast path takes it again.
        @Test func aMarkedLaneIsKeptWhenTheLoopTurnsBusy() throws {
            let notes = onThreadWithLane("lane-busy") { loop, lane, notes in
                var open = false
                for value in 0..<4 {
                    _ = try? laneEmit(lane, value)
                    spindle_lane_note_idle(loop, lane)
                }
                if spindle_lane_current(loop) != nil { notes.append("not marked after four idle emits") }
                // The runner falls behind: nothing is reduced, the lane is
                // never drained, and 65 more emits find the loop busy.
                for value in 4..<69 {
                    if spindle_lane_lookup(loop, 64, &open) != lane { notes.append("lane lost at emit \(value)") }
                    _ = try? laneEmit(lane, value)
                }
                if spindle_lane_lookup(loop, 64, &open) != lane { notes.append("lane lost after the window") }
                if spindle_lane_current(loop) != lane { notes.append("the fast path did not take the lane back") }
                if laneDrain(lane) != Array(0..<69) { notes.append("events out of order or lost") }
                // The loop goes away (ORPHANED); the thread's exit frees the lane.
                if spindle_lane_release_loop(lane) { notes.append("freed while the thread held it") }
            }
            #expect(notes == [])
        }

        /// Thread exit marks the lane EXITED; the runner, having drained it,
        /// frees it. 64 short-lived threads, each a burst into its own lane.
        @Test func shortLivedThreadsLetTheirLanesGo() throws {
            let threads = 64
            let burst = 200
            let loop = freshLoopID()
            let lanes = Locked<[SharedHandle]>([])
            let failures = Atomic<Int>(0)
            let producers = TestThreads(threads, name: "lane-burst") { index in
                guard let lane = spindle_lane_create(loop, 8, 8, 16), spindle_lane_install(lane) else {
                    failures.add(1, ordering: .relaxed)
                    return
                }
                lanes.withLock { $0.append(SharedHandle(raw: lane)) }
                for sequence in 0..<burst {
                    guard (try? laneEmit(lane, index << 32 | sequence)) == true else {
                        failures.add(1, ordering: .relaxed)
                        return
                    }
                }
            }
            #expect(producers.join())
            #expect(failures.load(ordering: .relaxed) == 0)
            var check = ProducerStreamCheck(producers: threads, perProducer: burst)
            var freed = 0
            for lane in lanes.withLock({ $0 }) {
                for value in laneDrain(lane.raw) { check.record(value) }
                // `join` returns when the threads' bodies have returned; their
                // thread-exit hooks (which set EXITED) run just after.
                let deadline = ContinuousClock.now + hangGuard
                while spindle_lane_word(lane.raw) & SPINDLE_LANE_EXITED == 0, ContinuousClock.now < deadline {
                    sched_yield()
                }
                #expect(spindle_lane_word(lane.raw) & SPINDLE_LANE_EXITED != 0,
                        "the thread's exit did not let its lane go")
                if spindle_lane_reclaim_consumer(lane.raw) {
                    spindle_lane_destroy(lane.raw)  // the runner's part: drained and EXITED
                    freed += 1
                }
            }
            #expect(freed == threads)
            check.expectEveryEventExactlyOnceInProducerOrder()
        }
    }
}
