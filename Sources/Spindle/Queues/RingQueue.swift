internal import CSpindle

/// The bounded event queue: the C ring hands out sequence numbers (claim →
/// write → publish) and the payloads live in a preallocated Swift slot array
/// indexed by `sequence & mask`.
///
/// Thread safety: `tryEnqueue` from any thread (lock-free); `drain`,
/// `isEmpty` and `deinit` on the consumer only. A slot's payload is written
/// only by the producer that claimed it (before publish, release) and read
/// only by the consumer (after it saw the publish, acquire), so the slot
/// array needs no lock.
final class RingQueue<Event: Sendable>: Sendable {
    /// The ring's memory: see `Memory`.
    nonisolated(unsafe) private let memory: Memory
    private var ring: OpaquePointer { @inline(__always) get { memory.ring } }
    private var slots: UnsafeMutablePointer<Event> { @inline(__always) get { memory.slots } }
    private var scratch: UnsafeMutablePointer<Event> { @inline(__always) get { memory.scratch } }
    private let mask: UInt64
    /// The ring's capacity (the requested one rounded up to a power of two).
    let capacity: Int
    /// Blocked producers wait here for space; the consumer notifies it.
    let spaceParker: Parker
    /// Suspended producers (effect tasks) wait here; the consumer resumes
    /// them after the parker's fenced notify.
    let asyncSpaceWaiters = AsyncSpaceWaiters()

    /// The queue's raw memory, in one place. The pointers never change; what
    /// they point at is shared under rules the compiler cannot check, which
    /// is why this one stored property is `nonisolated(unsafe)`:
    private struct Memory {
        /// The C ring: any thread, as the concurrency table in
        /// spindle_ring.h says.
        let ring: OpaquePointer
        /// The payloads: a slot is owned by the producer that claimed it
        /// until its publish (release), then by the consumer (acquire) until
        /// it releases the slot (see the type's thread-safety note).
        let slots: UnsafeMutablePointer<Event>
        /// Consumer only: the event being reduced, moved out of its slot so
        /// the slot is free while the reducer runs.
        let scratch: UnsafeMutablePointer<Event>
    }

    init(capacity requested: Int) {
        precondition(requested > 0, "Spindle: a bounded queue needs a capacity > 0")
        guard let ring = spindle_ring_create(requested) else {
            fatalError("Spindle: cannot create a ring of capacity \(requested) (max 2^30)")
        }
        let capacity = spindle_ring_capacity(ring)
        self.capacity = capacity
        mask = UInt64(capacity - 1)
        memory = Memory(ring: ring, slots: .allocate(capacity: capacity), scratch: .allocate(capacity: 1))
        spaceParker = Parker()
    }

    deinit {
        _ = drain(max: .max) { $0.assumingMemoryBound(to: Event.self).deinitialize(count: 1) }
        slots.deallocate()
        scratch.deallocate()
        spindle_ring_destroy(ring)
    }

    @inline(__always)
    func tryEnqueue(_ event: Event) -> Bool {
        var sequence: UInt64 = 0
        guard spindle_ring_claim(ring, 1, &sequence) == 1 else { return false }
        (slots + Int(sequence & mask)).initialize(to: event)
        spindle_ring_publish(ring, sequence)
        return true
    }

    /// Enqueues copies of the first events of `events`, in order, with one
    /// claim (a seq_cst RMW on the tail) for as many slots as are free;
    /// returns how many (0 when the ring is full). Any thread.
    func tryEnqueue(contentsOf events: UnsafeBufferPointer<Event>) -> Int {
        guard let base = events.baseAddress, !events.isEmpty else { return 0 }
        var first: UInt64 = 0
        let claimed = spindle_ring_claim(ring, events.count, &first)
        var offset = 0
        while offset < claimed {
            let sequence = first &+ UInt64(offset)
            (slots + Int(sequence & mask)).initialize(to: base[offset])
            spindle_ring_publish(ring, sequence)
            offset += 1
        }
        return claimed
    }

    func drain(max: Int, _ body: (UnsafeMutableRawPointer) -> Void) -> Int {
        drain(max: max, bodyMayBlock: false, body)
    }

    /// Hands up to `max` events to `body`, in order, freeing each slot before
    /// `body` runs. `bodyMayBlock`: `body` runs user code that may wait (an
    /// inline feedback emitting into another full `.block` ring, an
    /// observer hook), so each freed slot is announced to a waiting producer
    /// with a fenced notify before `body` runs; otherwise the fenced notify
    /// comes once per run, after it, and an unfenced look per event wakes a
    /// producer early when it can. Consumer only.
    func drain(max: Int, bodyMayBlock: Bool, _ body: (UnsafeMutableRawPointer) -> Void) -> Int {
        var total = 0
        while total < max {
            var first: UInt64 = 0
            let run = spindle_ring_available_consumer(ring, min(max - total, capacity), &first)
            if run == 0 { break }
            var offset: UInt64 = 0
            while offset < UInt64(run) {
                scratch.moveInitialize(from: slots + Int((first &+ offset) & mask), count: 1)
                offset &+= 1
                // Free the slot before reducing: the capacity counts events
                // waiting, not the one being reduced.
                spindle_ring_release_consumer(ring, 1)
                // Wake a producer waiting for space before `body` runs.
                // When `body` may block (a `.block` emit into a full
                // downstream loop), the wake must not be missed: a fenced
                // notify (the slot's release store, then the fence, then the
                // load of the waiters; Dekker with the producer's
                // registration). Without the fence the load may be ordered
                // before the release store and miss a producer that has just
                // registered; with `body` blocked, the fenced notify after
                // the run would come late and the producer would wait out
                // its safety-net timeout. When `body` cannot block,
                // the plain look per event suffices (the fenced notify
                // after the run catches what it misses, promptly).
                if bodyMayBlock {
                    spaceParker.notify()
                    asyncSpaceWaiters.resumeAll()
                } else if spaceParker.hasWaiters {
                    spaceParker.notify()
                }
                body(UnsafeMutableRawPointer(scratch))
            }
            spaceParker.notify()
            asyncSpaceWaiters.resumeAll()
            total += run
        }
        return total
    }

    /// Wakes every producer waiting for space, blocked or suspended (after
    /// the queue closed). Any thread.
    func notifySpace() {
        spaceParker.notify()
        asyncSpaceWaiters.resumeAll()
    }

    var isEmpty: Bool { spindle_ring_depth(ring) == 0 }

    /// Events waiting (approximate under concurrency). Any thread.
    var depth: Int { spindle_ring_depth(ring) }
}
