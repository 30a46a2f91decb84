internal import CSpindle

/// The default, unbounded event queue: liburcu's wait-free concurrent queue
/// with pooled nodes that carry each `Event` inline (no allocation per event
/// in steady state).
///
/// A loop reaches it through `LockFreeQueue<Event>`, its typed handle
/// (below): the event type is a parameter of each of this storage's
/// methods, which must name the type its `init` was given; they are
/// fileprivate, and the handle, made with that type, is the only caller.
///
/// A handle, not an object: the owner (its loop) empties the queue
/// (`discardAll`) and then `destroy`s it, once, when it is done with it. An
/// object would cost each loop an allocation of its own, which a server
/// with a loop per connection pays per connection.
///
/// Thread safety: `tryEnqueue` from any thread (wait-free, except when the
/// node pool grows); `drain`, `isEmpty`, `discardAll` and `destroy` on the
/// consumer only.
struct _UnsafeLockFreeQueue: Sendable {
    // The C queue follows the concurrency table in spindle_wfq.h: producers may
    // call acquire/enqueue concurrently, only the reducer thread consumes.
    nonisolated(unsafe) private let raw: OpaquePointer

    fileprivate init<Event>(of type: Event.Type, nodesPerSlab: Int = 8) {
        // At least a pointer's room: a node may carry a lane's marker instead
        // of an event (see `enqueueMarker`).
        guard let raw = spindle_wfq_create(
            Swift.max(MemoryLayout<Event>.size, MemoryLayout<UnsafeRawPointer>.size),
            Swift.max(MemoryLayout<Event>.alignment, MemoryLayout<UnsafeRawPointer>.alignment), nodesPerSlab
        ) else {
            fatalError("Spindle: cannot create an event queue for \(Event.self) (alignment > 64 or out of memory)")
        }
        self.raw = raw
    }

    /// Frees the queue: once, by its owner, after `discardAll`, with no
    /// producer left (the loop is gone).
    fileprivate func destroy() {
        spindle_wfq_flush_consumer(raw)
        spindle_wfq_destroy(raw)
    }

    /// Deinitializes every event still queued. Consumer only; the owner calls
    /// it before releasing the queue.
    /// Markers met are handed to `marker` (the owner lets their lanes go).
    fileprivate func discardAll<Event>(of type: Event.Type, marker: (OpaquePointer) -> Void) {
        _ = drain(max: .max, { $0.assumingMemoryBound(to: Event.self).deinitialize(count: 1) }, marker: marker)
    }

    @inline(__always)
    @discardableResult
    fileprivate func tryEnqueue<Event>(_ event: Event) -> Bool {
        guard let payload = spindle_wfq_acquire(raw) else {
            fatalError("Spindle: out of memory growing the event pool")
        }
        payload.assumingMemoryBound(to: Event.self).initialize(to: event)
        spindle_wfq_enqueue(raw, payload)
        return true
    }

    /// The most events one tail exchange publishes: the batch's pointer
    /// buffer (8 bytes an event) stays within the 1 KiB that
    /// `withUnsafeTemporaryAllocation` always puts on the stack; larger, it
    /// would allocate on the heap once per batch.
    fileprivate static var publishChunk: Int { 128 }

    /// Enqueues copies of `events` in order, each run of up to
    /// `publishChunk` (128) with one pool CAS and one tail exchange (a full
    /// barrier). Any thread.
    fileprivate func enqueue<Event>(contentsOf events: UnsafeBufferPointer<Event>) {
        guard var base = events.baseAddress else { return }
        var remaining = events.count
        withUnsafeTemporaryAllocation(of: UnsafeMutableRawPointer?.self, capacity: Self.publishChunk) { payloads in
            while remaining > 0 {
                let count = Swift.min(remaining, Self.publishChunk)
                guard spindle_wfq_acquire_many(raw, payloads.baseAddress!, count) == count else {
                    fatalError("Spindle: out of memory growing the event pool")
                }
                for index in 0..<count {
                    payloads[index].unsafelyUnwrapped.assumingMemoryBound(to: Event.self).initialize(to: base[index])
                }
                spindle_wfq_enqueue_many(raw, payloads.baseAddress!, count)
                base += count
                remaining -= count
            }
        }
    }

    /// Enqueues a lane's marker, in order with the events (see LANES.md).
    /// Any thread. False when memory is exhausted.
    fileprivate func enqueueMarker(_ lane: OpaquePointer) -> Bool {
        spindle_wfq_enqueue_marker(raw, UnsafeMutableRawPointer(lane))
    }

    /// Hands up to `max` events to `body` in order, and each marker met on
    /// the way to `marker` (markers do not count). Consumer only.
    fileprivate func drain(
        max: Int, _ body: (UnsafeMutableRawPointer) -> Void, marker: (OpaquePointer) -> Void
    ) -> Int {
        var count = 0
        var found: UnsafeMutableRawPointer?
        while count < max {
            if let payload = spindle_wfq_next_or_marker_consumer(raw, &found) {
                body(payload)
                count += 1
            } else if let lane = found {
                found = nil
                marker(OpaquePointer(lane))
            } else if !spindle_wfq_splice_consumer(raw) {
                break
            }
        }
        return count
    }

    fileprivate var isEmpty: Bool { spindle_wfq_is_empty_consumer(raw) }

    /// True when nothing is enqueued beyond the consumer's private batch.
    /// Any thread (it reads only the shared tail).
    fileprivate var looksEmpty: Bool { spindle_wfq_looks_empty(raw) }

    /// Hands finished nodes back to the pool (before the consumer sleeps).
    fileprivate func flushFinishedNodes() { spindle_wfq_flush_consumer(raw) }
}

/// The default, unbounded event queue (see `_UnsafeLockFreeQueue`), typed:
/// made with the loop's `Event` and the only way to reach the storage, so
/// no call can name another type. A value holding one pointer; its calls
/// inline to the storage's.
///
/// Thread safety: as the storage's: `tryEnqueue`, `enqueue(contentsOf:)`
/// and `enqueueMarker` from any thread, `looksEmpty` too; the rest on the
/// consumer only.
struct LockFreeQueue<Event: Sendable>: Sendable {
    private let storage: _UnsafeLockFreeQueue

    init() {
        storage = _UnsafeLockFreeQueue(of: Event.self)
    }

    /// Frees the queue: once, by its owner, after `discardAll`, with no
    /// producer left.
    func destroy() { storage.destroy() }

    /// Deinitializes every event still queued, handing markers met to
    /// `marker`. Consumer only.
    func discardAll(marker: (OpaquePointer) -> Void) {
        storage.discardAll(of: Event.self, marker: marker)
    }

    @inline(__always)
    @discardableResult
    func tryEnqueue(_ event: Event) -> Bool { storage.tryEnqueue(event) }

    /// Enqueues copies of `events` in order (see the storage's). Any thread.
    @inline(__always)
    func enqueue(contentsOf events: UnsafeBufferPointer<Event>) { storage.enqueue(contentsOf: events) }

    /// Enqueues a lane's marker, in order with the events. Any thread.
    @inline(__always)
    func enqueueMarker(_ lane: OpaquePointer) -> Bool { storage.enqueueMarker(lane) }

    /// Hands up to `max` events (each an initialized `Event` to move out)
    /// to `body` in order, and each marker met to `marker`. Consumer only.
    @inline(__always)
    func drain(
        max: Int, _ body: (UnsafeMutableRawPointer) -> Void, marker: (OpaquePointer) -> Void
    ) -> Int {
        storage.drain(max: max, body, marker: marker)
    }

    @inline(__always)
    var isEmpty: Bool { storage.isEmpty }

    /// True when nothing is enqueued beyond the consumer's private batch.
    /// Any thread.
    @inline(__always)
    var looksEmpty: Bool { storage.looksEmpty }

    /// Hands finished nodes back to the pool (before the consumer sleeps).
    func flushFinishedNodes() { storage.flushFinishedNodes() }
}
