internal import Atomics
internal import CSpindle

/// A loop's hot atomics, packed into 24 bytes, its lane set, the counters
/// an emit or a slice writes, its C task node and its pool links, in one
/// allocation: the words every emit reads (the scheduling state, `closed`,
/// the runner's id) and the stop's flags. Separate atomics cost an
/// allocation and, for a loop that is cold in the cache, a miss each.
///
/// The only unsafe code for them: each property is a view of a fixed offset
/// in `base` (an `UnsafeAtomic`, or for the pool links plain loads and
/// stores under the pool's registry lock), which `init` binds and
/// initializes and `deallocate` frees. One stored pointer: every other
/// place (the task, the lane set) is `base` plus a constant, so the loop
/// object that holds the words spends 8 bytes on them, not a line's third.
///
/// Thread safety: the atomic views, any thread; the pool links, inside the
/// pool's registry lock.
struct LoopWords: @unchecked Sendable {
    // @unchecked: `base` is an immutable pointer to memory accessed only
    // through the atomic views below.
    private let base: UnsafeMutableRawPointer

    // The layout is CSpindle's (spindle_lane.h), whose inlined emit reads
    // the first three words too (`spindle_lane_fast_reserve`).
    private static let runnerTokenOffset = Int(SPINDLE_WORDS_RUNNER_TOKEN_OFFSET)  // UInt
    private static let acceptedCountOffset = Int(SPINDLE_WORDS_ACCEPTED_COUNT_OFFSET)  // Int
    private static let schedulingOffset = Int(SPINDLE_WORDS_SCHEDULING_OFFSET)     // SchedulingState (UInt8)
    private static let closedOffset = Int(SPINDLE_WORDS_CLOSED_OFFSET)             // Bool
    private static let stopRequestOffset = Int(SPINDLE_WORDS_STOP_REQUEST_OFFSET)  // StopRequest (UInt8)
    private static let graceDoneOffset = Int(SPINDLE_WORDS_GRACE_DONE_OFFSET)      // Bool
    private static let observersCreatedOffset = Int(SPINDLE_WORDS_OBSERVERS_CREATED_OFFSET)  // Bool
    private static let settlePendingOffset = Int(SPINDLE_WORDS_SETTLE_PENDING_OFFSET)  // Bool
    private static let wordsSize = Int(SPINDLE_WORDS_SIZE)
    /// The counters an emit or a slice writes (`reduced`, `directRuns`,
    /// `inlineRuns`: three `Int`s), right after the lane set: on the
    /// words' line or the next, where in an object of their own they cost
    /// a request through a loop cold in the cache (a connection's) a line
    /// of its own.
    /// (A constant: each counter's view computes its offset, and the
    /// lane set's size as a call would cost every access a call.)
    private static let hotCountersOffset = wordsSize + Int(SPINDLE_LANE_SET_SIZE)
    private static let hotCountersSize = 3 * MemoryLayout<Int>.stride
    /// Where the task sits in the allocation (the bytes before it: the
    /// words, the lane set, the hot counters).
    static let taskOffset = hotCountersOffset + hotCountersSize
    /// Where the pool links sit: after the task, which only a scheduling
    /// through the executor's queue touches; the links only the pool's
    /// registry does, at a loop's start and finish.
    private static var poolLinksOffset: Int { taskOffset + spindle_task_size() }
    private static var size: Int { poolLinksOffset + MemoryLayout<ScheduledLoop.PoolLinks>.size }

    /// The loop's C task node (see `spindle_task`), in the same allocation,
    /// after the counters: only a scheduling through the executor's queue
    /// touches it.
    var task: OpaquePointer {
        @inline(__always) get { OpaquePointer(base + Self.taskOffset) }
    }
    /// Room for the loop's lane set (see `spindle_lane_set`: one pointer),
    /// right after the words, on their line: an emit's empty-queue check
    /// reads it (`spindle_lane_set_looks_runnable`). Uninitialized until a
    /// loop on the lock-free queue initializes it (`spindle_lane_set_init`);
    /// the loop deinitializes it.
    var laneSetMemory: UnsafeMutableRawPointer {
        @inline(__always) get { base + Self.wordsSize }
    }

    init() {
        // Word-aligned, not line-aligned: an aligned allocation pads to the
        // line (64 bytes or more per loop). The words, the lane set, the
        // task and the pool links share one allocation (a malloc chunk
        // each cost 16 bytes more, and a request through the loop one more
        // line to fetch).
        base = .allocate(byteCount: Self.size, alignment: 8)
        base.initializeMemory(as: UInt8.self, repeating: 0, count: Self.size)
        base.initializeAtomic(at: Self.runnerTokenOffset, to: UInt(0))
        base.initializeAtomic(at: Self.acceptedCountOffset, to: 0)
        base.initializeAtomic(at: Self.schedulingOffset, to: SchedulingState.scheduled)
        base.initializeAtomic(at: Self.closedOffset, to: false)
        base.initializeAtomic(at: Self.stopRequestOffset, to: StopRequest.none)
        base.initializeAtomic(at: Self.graceDoneOffset, to: false)
        base.initializeAtomic(at: Self.observersCreatedOffset, to: false)
        base.initializeAtomic(at: Self.settlePendingOffset, to: false)
        for counter in 0..<3 { base.initializeAtomic(at: Self.hotCountersOffset + counter * MemoryLayout<Int>.stride, to: 0) }
        spindle_task_init(base + Self.taskOffset, nil)
        assert(SchedulingState.running.rawValue == SPINDLE_SCHEDULING_RUNNING
               && SchedulingState.finished.rawValue > SPINDLE_SCHEDULING_RUNNING,
               "the C fast path's reading of SchedulingState")
    }

    /// The loop's links in its pool's list of live loops
    /// (`ScheduledLoop.poolLinks`): plain loads and stores, made only
    /// inside the pool's registry lock, which orders them (hence no atomics).
    /// Zero (no neighbour) until the loop is registered.
    var poolLinks: ScheduledLoop.PoolLinks {
        get { (base + Self.poolLinksOffset).load(as: ScheduledLoop.PoolLinks.self) }
        nonmutating set { (base + Self.poolLinksOffset).storeBytes(of: newValue, as: ScheduledLoop.PoolLinks.self) }
    }

    /// Where the words are, for the inlined emit's C fast path
    /// (`spindle_lane_fast_reserve`), which reads the runner token, the
    /// scheduling state and `closed` at the offsets above.
    var address: UnsafeRawPointer { UnsafeRawPointer(base) }

    /// Ends the task and frees the words. Called once, by the owning loop's
    /// deinit.
    func deallocate() {
        spindle_task_deinit(task)
        base.deallocate()
    }

    @inline(__always)
    private func view<Value: AtomicValue>(_ offset: Int, _ type: Value.Type) -> UnsafeAtomic<Value> {
        base.atomic(at: offset, as: type)
    }

    /// The thread running a slice (its pthread id), 0 between slices.
    var runnerToken: UnsafeAtomic<UInt> { view(Self.runnerTokenOffset, UInt.self) }
    /// Events accepted, counted only when the loop is observed.
    var acceptedCount: UnsafeAtomic<Int> { view(Self.acceptedCountOffset, Int.self) }
    /// The scheduling protocol's state word.
    var schedulingState: UnsafeAtomic<SchedulingState> { view(Self.schedulingOffset, SchedulingState.self) }
    /// Set once by stop; read by every emit.
    var closed: UnsafeAtomic<Bool> { view(Self.closedOffset, Bool.self) }
    /// The first stop request's mode.
    var stopRequest: UnsafeAtomic<StopRequest> { view(Self.stopRequestOffset, StopRequest.self) }
    /// Set by the stop's grace-period callback.
    var graceDone: UnsafeAtomic<Bool> { view(Self.graceDoneOffset, Bool.self) }
    /// Set (release) once the loop's `states` machinery exists.
    var observersCreated: UnsafeAtomic<Bool> { view(Self.observersCreatedOffset, Bool.self) }
    /// Set while a `settled()` call waits for the runner to take it.
    var settlePending: UnsafeAtomic<Bool> { view(Self.settlePendingOffset, Bool.self) }
    /// Events reduced: written by the runner after each batch.
    var reduced: UnsafeAtomic<Int> { view(Self.hotCountersOffset, Int.self) }
    /// Schedulings an emit ran on the loop's own executor by the direct
    /// path (`takeToRunHere`), for the stress tests' premise. Written by
    /// the emit that took the loop (it owns it), so a load and a store.
    var directRuns: UnsafeAtomic<Int> { view(Self.hotCountersOffset + MemoryLayout<Int>.stride, Int.self) }
    /// Schedulings an emit ran on the loop's own executor after enqueueing
    /// (the inline fast path, `runHere`). Written as `directRuns` is.
    var inlineRuns: UnsafeAtomic<Int> { view(Self.hotCountersOffset + 2 * MemoryLayout<Int>.stride, Int.self) }
}
