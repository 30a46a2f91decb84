internal import Atomics

/// What makes a loop's default queue bounded (`QueueKind.bounded`): the
/// events wait where the default queue's do (the shared queue, and the
/// lanes of the producers that stream into the loop), and this admits
/// them, so that at most `capacity` accepted events wait at any time.
///
/// The capacity is split once, at start:
/// - `laneBudget` events for each of at most `maxLanes` lanes (a ticket
///   each): a lane is bounded by its own budget
///   (`spindle_lane_set_budget`), which its producer checks against the
///   runner's count, re-read once per budget's worth of events, not per
///   event. A lane's events count until the run that reduces them ends (a
///   lane's run is reduced whole).
/// - the rest, `sharedCapacity`, for the shared queue, counted with a
///   count per side: producers claim slots with a compare-and-swap on
///   `claimed`, checked against `released`, which only the runner writes,
///   with a plain store before it reduces each event (the event being
///   reduced is not waiting).
///
/// So the bound is exact (the shares add up to the capacity), and no event
/// on a lane pays a shared counter.
///
/// The price: a lane's producer waits (or drops) when its own share is
/// full, though the shared share may have room; a producer with no lane
/// (none left, or not streaming) uses the shared share. No share waits on
/// another: each is freed only by the runner reducing its own events,
/// which are queued, so a full share always empties.
///
/// Thread safety: any thread, except as each member says.
final class BoundedAdmission: Sendable {
    /// The overflow policy.
    let policy: OverflowPolicy
    /// Events one lane may hold; 0 when the capacity is too small to share
    /// (then every event goes through the shared queue).
    let laneBudget: Int
    /// The shared queue's share of the capacity.
    let sharedCapacity: Int
    /// Three atomics, each on a cache line of its own (one allocation):
    /// `claimed`, written by producers; `released`, by the runner (the
    /// only writer, one at a time); `tickets`, seldom. `nonisolated(unsafe)`:
    /// the pointer never changes, and what it points at is reached only as
    /// atomics.
    nonisolated(unsafe) private let words: UnsafeMutableRawPointer
    /// Blocked producers wait here for space; the runner notifies it after
    /// freeing slots of the shared share or taking events from a lane.
    let spaceParker = Parker()
    /// Suspended producers (effect tasks) wait here; resumed with the
    /// parker's notify.
    let asyncSpaceWaiters = AsyncSpaceWaiters()

    /// The most lanes a bounded loop opens.
    static let maxLanes = 8
    /// A lane's share: a sixteenth of the capacity, at most this.
    static let maxLaneBudget = 4096
    /// The smallest lane share worth a lane (a lane's first block).
    static let minLaneBudget = 64
    private static let line = 64

    /// `capacity`: 1…2^30 (the start checked it).
    init(capacity requested: Int, policy: OverflowPolicy) {
        precondition(requested > 0 && requested <= 1 << 30, "Spindle: a bounded queue needs a capacity in 1…2^30")
        var capacity = 1
        while capacity < requested { capacity <<= 1 }
        self.policy = policy
        let budget = Swift.min(Self.maxLaneBudget, capacity / 16)
        laneBudget = budget >= Self.minLaneBudget ? budget : 0
        let lanes = laneBudget > 0 ? Self.maxLanes : 0
        sharedCapacity = capacity - lanes * laneBudget
        words = .allocate(byteCount: 3 * Self.line, alignment: Self.line)
        for (index, value) in [0, 0, lanes].enumerated() { words.initializeAtomic(at: index * Self.line, to: value) }
    }

    deinit {
        words.deallocate()
    }

    // The atomics' views (the memory lives as long as `self`).
    private var claimed: UnsafeAtomic<Int> { view(0) }
    private var released: UnsafeAtomic<Int> { view(1) }
    private var tickets: UnsafeAtomic<Int> { view(2) }
    @inline(__always)
    private func view(_ index: Int) -> UnsafeAtomic<Int> {
        words.atomic(at: index * Self.line)
    }

    // MARK: The shared share

    /// Claims one slot of the shared share; false when it is full. Any
    /// thread.
    @inline(__always)
    func tryClaim() -> Bool { tryClaim(upTo: 1) == 1 }

    /// Claims up to `count` slots of the shared share with one
    /// compare-and-swap; returns how many (0 when it is full). Any thread.
    /// A stale `released` only makes the share look fuller than it is: it
    /// never grows past the capacity.
    @inline(__always)
    func tryClaim(upTo count: Int) -> Int {
        var taken = claimed.load(ordering: .relaxed)
        while true {
            let free = sharedCapacity - (taken &- released.load(ordering: .acquiring))
            if free <= 0 { return 0 }
            let claim = Swift.min(free, count)
            let (exchanged, original) = claimed.weakCompareExchange(
                expected: taken, desired: taken &+ claim, ordering: .acquiringAndReleasing)
            if exchanged { return claim }
            taken = original
        }
    }

    /// Whether the shared share has a free slot. Any thread.
    var sharedHasRoom: Bool {
        claimed.load(ordering: .sequentiallyConsistent) &- released.load(ordering: .sequentiallyConsistent)
            < sharedCapacity
    }

    /// Runner: frees the slot of an event taken from the shared queue,
    /// before it is reduced (a plain store: the runner is the only writer).
    /// A producer waiting for space hears of it from `wakeWaiting` (after
    /// the run, or at once when the reduction may block) or `freedLook`.
    @inline(__always)
    func free() {
        released.store(released.load(ordering: .relaxed) &+ 1, ordering: .releasing)
    }

    /// Runner, after `free()` with a reduction that cannot block: an
    /// unfenced look wakes a producer early when it can; `wakeWaiting`
    /// after the run catches what it misses.
    @inline(__always)
    func freedLook() {
        if spaceParker.hasWaiters { spaceParker.notify() }
    }

    /// Wakes the producers waiting for space, blocked or suspended, with a
    /// fenced notify (the caller's stores, then the fence, then the load of
    /// the waiters: Dekker with a waiter's registration, then re-check).
    /// The runner calls it after a run that freed slots (of the shared
    /// share or of a lane), or after each `free()` when the reduction to
    /// come may block; a stop, after closing the loop. Any thread.
    @inline(__always)
    func wakeWaiting() {
        spaceParker.notify()
        asyncSpaceWaiters.resumeAll()
    }

    // MARK: Lanes

    /// Takes a ticket for a new lane; false when the loop has all its lanes
    /// (or shares no capacity with lanes). Any thread.
    func takeLaneTicket() -> Bool {
        var free = tickets.load(ordering: .relaxed)
        while free > 0 {
            let (exchanged, original) = tickets.weakCompareExchange(
                expected: free, desired: free - 1, ordering: .relaxed)
            if exchanged { return true }
            free = original
        }
        return false
    }

    /// A lane's ticket back: the lane was freed, or never opened. Any
    /// thread.
    func returnLaneTicket() {
        tickets.wrappingIncrement(ordering: .relaxed)
    }
}
