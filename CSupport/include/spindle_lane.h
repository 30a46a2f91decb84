// CSpindle: Per-producer lanes (SPSC, linked blocks).
// One part of the module: CSpindle.h includes every part and gives the
// overview and the naming ladder.
#ifndef SPINDLE_LANE_H
#define SPINDLE_LANE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spindle_tsan.h"
#include "spindle_gate.h"
#include "spindle_sched.h"

#ifdef __cplusplus
extern "C" {
#endif

// MARK: - Per-producer lanes (SPSC, linked blocks)

/// A single-producer / single-consumer queue of fixed-size payloads in linked
/// blocks: one hot producer thread's way into one loop. The protocol that
/// keeps the loop's contract (order across the switch from the shared queue,
/// the idle edge, stop, reclamation) is LANES.md ("v2, as built") beside the scheduling model;
/// lanes.pml model-checks it.
///
/// The lane word: the count of published slots, and flags.
#define SPINDLE_LANE_EXITED (1ull << 61)    /* the producer let go (thread exit, evicted) */
#define SPINDLE_LANE_ORPHANED (1ull << 60)  /* the loop is gone */
#define SPINDLE_LANE_COUNT_MASK 0x0FFFFFFFFFFFFFFFull  /* bits 0-59 */

///   | operation                    | producer ops | runner ops | release_loop |
///   | begin/slot/publish/abort (1) |      no*     |    yes     |     no**     |
///   | available/run/reclaim  (1)   |      yes     |    no*     |     no       |
///   * one thread at a time on each side.
///   ** the loop is released only when no emit into it can be running.
///   Who frees a lane: exactly one of the runner (EXITED and drained), the
///   producer thread (it finds ORPHANED when it lets go), or `release_loop`
///   (it finds EXITED).
typedef struct spindle_lane spindle_lane;

/// Creates a lane for `loop_id` (a loop identity that is never reused),
/// with its first block. `slots_per_block` at least 2. NULL on exhaustion or
/// when `payload_align` is not a power of two no greater than 64.
spindle_lane *spindle_lane_create(uint64_t loop_id, size_t payload_size, size_t payload_align,
                                  size_t slots_per_block);
/// Frees a lane and its blocks. The caller must have consumed or
/// deinitialized every payload in it; no other thread may touch it.
void spindle_lane_destroy(spindle_lane *lane);
/// Frees a lane after a grace period of the emit gate (liburcu call_rcu):
/// for a lane a thread re-checking an idle loop may still be reading.
void spindle_lane_destroy_deferred(spindle_lane *lane);
/// Lanes created and not destroyed, process-wide (leak checks).
long spindle_live_lanes(void);
/// Lanes ever created, process-wide (tests: whether a path took lanes).
long spindle_lanes_created(void);

// The producer's per-event calls (begin, slot, publish, abort, current)
// are static inline, below, so that they compile into the emitting code.

/// Producer, between begin and publish: links the next block (one the
/// runner handed back, or a new one, twice the last new one's size) and
/// returns its first slot, the emit having taken `reserved` slots before it;
/// `spindle_lane_slot` and `spindle_lane_slots` call it when the current
/// block is full. NULL on exhaustion.
void *spindle_lane_slot_in_next_block(spindle_lane *lane, size_t reserved);
/// Producer, between begin and publish, after `reserved` slots taken by
/// this emit (a batch): up to `max` next slots that lie next to each other
/// (`round_up(payload_size, payload_align)` apart), the first's address
/// returned and their number in `*count`; a bounded lane's slots stop at
/// its budget (0 and NULL on exhaustion, when a bounded lane is full, or
/// when `max` is 0). Call again for the rest of a batch, with `reserved` grown by
/// `*count`.
void *spindle_lane_slots(spindle_lane *lane, size_t reserved, size_t max, size_t *count);
/// Bounds a lane before its producer's first emit: it may then hold at
/// most `budget` events the runner has not taken (a bounded queue's share
/// for one producer); `spindle_lane_slot` and `spindle_lane_slots` hand
/// out no slot beyond it. 0: unbounded (the default).
void spindle_lane_set_budget(spindle_lane *lane, uint32_t budget);
/// Producer: re-reads the runner's count (acquire) and answers whether the
/// lane has room for one more event. Always true for an unbounded lane.
bool spindle_lane_has_room(spindle_lane *lane);
/// Producer, after `spindle_lane_slot` or `spindle_lane_slots` gave no
/// slot (and the emit published what it took): whether that was because
/// the lane was full, as of the runner's count that call read (not read
/// again here). False: the allocator ran out.
bool spindle_lane_was_full(spindle_lane *lane);
/// Producer: lets go of a lane it will not use again (EXITED), freeing it
/// when the loop is gone (as at thread exit).
void spindle_lane_let_go(spindle_lane *lane);

/// Runner: the lane word (sequentially consistent), for the re-check after
/// the loop's IDLE store: runnable when it has BUSY or a count above what
/// the runner consumed.
uint64_t spindle_lane_word(const spindle_lane *lane);
/// Runner: reads the published count (acquire) and returns how many slots
/// wait.
size_t spindle_lane_available_consumer(spindle_lane *lane);
/// Runner: the next run of waiting slots (counted by the last `available`)
/// that lie next to each other, at most `max`: returns the first payload
/// and stores the run's length in `*count` (0 and NULL: none). Payloads are
/// `round_up(payload_size, payload_align)` apart. Every payload of the
/// previous run must be moved out and `spindle_lane_consumed` called before
/// this is called again (a drained block is handed back here).
void *spindle_lane_run_consumer(spindle_lane *lane, size_t max, size_t *count);
/// Runner: the first `count` payloads of the last run were moved out.
void spindle_lane_consumed(spindle_lane *lane, size_t count);
/// Runner: one payload (`run` and `consumed` for one), or NULL.
void *spindle_lane_next_consumer(spindle_lane *lane);
/// Runner, at a slice's end: true when the lane's thread let it go (EXITED)
/// and every event is taken: remove it from the set, then free it
/// (deferred).
bool spindle_lane_reclaim_consumer(spindle_lane *lane);
/// The loop is going away: marks the lane ORPHANED; frees it and returns
/// true when its producer already let go (EXITED).
bool spindle_lane_release_loop(spindle_lane *lane);

/// The emits in a row from one thread into one loop that earn it a lane
/// (`Lanes.streak`, `LaneTuning.streak`; 64 unless a test changed it), and
/// the next loop identity for the threads' lane tables (never reused).
/// Plain C globals with constant initializers: every emit reads the first,
/// and a Swift global would reach it through the runtime's lazy
/// initializer (`swift_once`), whose lock the first emits of a process,
/// racing from many threads, would queue on. Atomics (relaxed).
extern uint32_t spindle_lane_streak_setting;
extern uint64_t spindle_lane_next_loop_id_value;

static inline uint32_t spindle_lane_streak(void) {
    return __atomic_load_n(&spindle_lane_streak_setting, __ATOMIC_RELAXED);
}

static inline void spindle_lane_set_streak(uint32_t streak) {
    __atomic_store_n(&spindle_lane_streak_setting, streak, __ATOMIC_RELAXED);
}

/// A new loop identity: never 0, never one given before.
static inline uint64_t spindle_lane_next_loop_id(void) {
    return __atomic_fetch_add(&spindle_lane_next_loop_id_value, 1, __ATOMIC_RELAXED);
}

/// The calling thread's lane into `loop_id`, or NULL. When NULL, counts the
/// emit in the thread's streak for that loop and sets `*should_open` once
/// the streak reaches `streak_to_open` (then: create, send the marker,
/// `spindle_lane_install`). An entry of another loop in the same table slot
/// is let go (its lane marked EXITED). Thread-local; any thread.
spindle_lane *spindle_lane_lookup(uint64_t loop_id, uint32_t streak_to_open, bool *should_open);
/// Puts `lane` in the calling thread's table (its producer from now on);
/// registers the thread-exit hook that lets its lanes go. False if the hook
/// cannot be registered (then the caller destroys the lane).
bool spindle_lane_install(spindle_lane *lane);
/// Producer: every event it published has been reduced (the runner's
/// count, acquire), so its next emits may go through the shared queue
/// without passing them.
bool spindle_lane_drained(spindle_lane *lane);
/// Producer, after an emit on `lane` whose wake-up found the loop idle:
/// when that happened often enough lately (4 times within 64 emits), the
/// thread lets the lane go: a loop that idles between emits is better
/// served by the shared queue (each idle transition costs its runner a
/// membarrier). Only once every event on the lane is reduced, so that the
/// thread's next emits cannot pass them: at once if it is drained, else at
/// the thread's next emit into the loop that finds it drained (the entry is
/// marked, `spindle_lane_current` returns NULL for it, and
/// `spindle_lane_lookup` lets it go). Thread-local.
void spindle_lane_note_idle(uint64_t loop_id, spindle_lane *lane);
/// The calling thread's emit through the shared queue found the loop idle:
/// its streak towards a lane starts again. Thread-local.
void spindle_lane_reset_streak(uint64_t loop_id);

/// The lanes a loop's runner reads (see spindle_lane.c): changed by the
/// runner only; scanned by any thread (`looks_runnable`).
typedef struct spindle_lane_set spindle_lane_set;
/// Bytes a set takes (one pointer): a loop keeps its set in its words'
/// allocation, beside its task node, not in an allocation of its own.
size_t spindle_lane_set_size(void);
/// `spindle_lane_set_size()` as a constant, for offsets computed on hot
/// paths (a loop's counters after its set) without a call.
#define SPINDLE_LANE_SET_SIZE 8
/// Initializes an empty set in `memory` (`spindle_lane_set_size()` bytes,
/// 8-aligned), which the caller owns; returns it.
spindle_lane_set *spindle_lane_set_init(void *memory);
/// Lets go of every lane in the set (`spindle_lane_release_loop`); frees
/// no memory of the set's own (the caller's). The loop is going away:
/// nobody else touches the set.
void spindle_lane_set_deinit(spindle_lane_set *set);
/// Runner: adds a lane (its marker was reduced). False on exhaustion.
bool spindle_lane_set_add_consumer(spindle_lane_set *set, spindle_lane *lane);
/// Runner: removes the lane at `index` (order of the others kept). False
/// when the smaller list could not be allocated: the lane stays listed and
/// the caller must not free it (it can try again at the next slice's end).
bool spindle_lane_set_remove_consumer(spindle_lane_set *set, size_t index);
/// Tests only: the calling thread's next `count` lane-list allocations fail
/// (the out-of-memory paths of add and remove).
void spindle_lane_set_fail_allocations(unsigned count);
/// Runner: how many lanes, and the one at `index`.
size_t spindle_lane_set_count_consumer(spindle_lane_set *set);
spindle_lane *spindle_lane_set_at_consumer(spindle_lane_set *set, size_t index);
/// Any thread (the idle re-check): true when a lane is BUSY or holds a slot
/// its runner has not taken. Sequentially consistent loads of the words,
/// inside a gate section.
bool spindle_lane_set_looks_runnable(spindle_lane_set *set, bool fence);
// MARK: - Per-producer lanes: the producer's fast path (inline)

/// A block of a lane: its header, then `capacity` slots. Public only for
/// the inline functions below.
struct spindle_lane_block {
    _Atomic(struct spindle_lane_block *) next;  // written by the producer before it publishes a slot in next
    uint32_t capacity;                          // slots; immutable
};

/// A lane's first cache line: the producer's. `spindle_lane` begins with it
/// (spindle_lane.c), and its published count (the lane word) is the first
/// word of the second line. Public only for the inline functions below;
/// Swift never reads it.
struct spindle_lane_producer {
    /// The producer's emit generation, odd while an emit is under way:
    /// plain stores (the runner reads it only after a membarrier, see
    /// `spindle_lane_begin`), at idle re-checks and at stop, never per event.
    _Atomic uint64_t busy;
    /// The published count at `tail_block`'s first slot. The next slot's
    /// index in the block is the published count (read back from the lane
    /// word, which only the producer's publishes change while it emits)
    /// minus this: an emit stores no cursor of its own.
    uint64_t block_base;
    struct spindle_lane_block *tail_block;
    uint32_t tail_capacity;                 // tail_block's capacity (a copy, on this line)
    uint32_t next_capacity;                 // the next new block's slots
    uint32_t payload_offset;                // the first slot's offset in a block
    uint32_t stride;                        // bytes per slot
    struct spindle_lane_block *free_chain;  // drained blocks to reuse
    /// A bounded lane's room, as far as the producer knows: the published
    /// count at which it must re-read the runner's count (`consumed +
    /// budget` when last read). UINT64_MAX for an unbounded lane, so that
    /// the check on the fast path never fails for one.
    uint64_t limit;
    /// The most events the lane may hold that the runner has not taken; 0:
    /// unbounded.
    uint32_t budget;
};
#define SPINDLE_LANE_WORD_OFFSET 64

/// One entry of a thread's table of lanes.
struct spindle_lane_entry {
    uint64_t loop_id;      // 0: empty
    spindle_lane *lane;    // NULL: counting a streak, no lane yet
    uint32_t streak;
    bool let_go_pending;   // the lane goes once drained (spindle_lane_note_idle)
};
#define SPINDLE_LANE_TABLE_SIZE 8
/// A thread's table of lanes (thread-local; spindle_lane.c).
struct spindle_lane_table {
    struct spindle_lane_entry entries[SPINDLE_LANE_TABLE_SIZE];
    uint32_t next_victim;
    bool registered;
};

/// The calling thread's table. (Declared inside the function, so that
/// Swift does not try to import a thread-local variable.)
static inline __attribute__((always_inline)) struct spindle_lane_table *spindle_lane_table_of_thread(void) {
    extern _Thread_local struct spindle_lane_table spindle_lane_thread_table;
    return &spindle_lane_thread_table;
}

/// A number that identifies the calling thread among live threads (the
/// address of its lane table): cheaper than `pthread_self`, which is a call.
static inline __attribute__((always_inline)) uintptr_t spindle_thread_token(void) {
    return (uintptr_t)spindle_lane_table_of_thread();
}

static inline __attribute__((always_inline)) uint32_t spindle_lane_table_slot(uint64_t loop_id) {
    return (uint32_t)((loop_id * 0x9E3779B97F4A7C15ull) >> 61) & (SPINDLE_LANE_TABLE_SIZE - 1);
}

/// The calling thread's lane into `loop_id`, or NULL: `spindle_lane_lookup`
/// without the streak (no side effect). NULL too for a lane waiting to be
/// let go (the lookup decides). Thread-local; any thread.
static inline __attribute__((always_inline)) spindle_lane *spindle_lane_current(uint64_t loop_id) {
    struct spindle_lane_entry *entry = &spindle_lane_table_of_thread()->entries[spindle_lane_table_slot(loop_id)];
    return entry->loop_id == loop_id && !entry->let_go_pending ? entry->lane : NULL;
}

/// Producer: starts an emit: a plain store of the BUSY generation (odd),
/// then a compiler barrier (a full fence when membarrier is unavailable).
/// The caller then loads the loop's `closed`; the runner's membarrier
/// (`spindle_lanes_heavy_fence`) orders the two for the side that reads.
static inline __attribute__((always_inline)) void spindle_lane_begin(spindle_lane *lane) {
    extern _Atomic bool spindle_lanes_asymmetric;
    struct spindle_lane_producer *producer = (struct spindle_lane_producer *)lane;
    uint64_t generation = atomic_load_explicit(&producer->busy, memory_order_relaxed);
    atomic_store_explicit(&producer->busy, generation + 1, memory_order_relaxed);
    if (atomic_load_explicit(&spindle_lanes_asymmetric, memory_order_relaxed)) {
        atomic_signal_fence(memory_order_seq_cst);
    } else {
        atomic_thread_fence(memory_order_seq_cst);
    }
}

/// Producer: ends an emit: the BUSY generation back to even (release).
static inline __attribute__((always_inline)) void spindle_lane_abort(spindle_lane *lane) {
    struct spindle_lane_producer *producer = (struct spindle_lane_producer *)lane;
    uint64_t generation = atomic_load_explicit(&producer->busy, memory_order_relaxed);
    atomic_store_explicit(&producer->busy, generation + 1, memory_order_release);
}

/// Producer: the count of slots it published, read back from the lane word
/// (relaxed: only the producer's own publishes change the count, and the
/// flags are never set while an emit is under way).
static inline __attribute__((always_inline)) uint64_t spindle_lane_published_producer(spindle_lane *lane) {
    const _Atomic uint64_t *word = (const _Atomic uint64_t *)((const char *)lane + SPINDLE_LANE_WORD_OFFSET);
    return atomic_load_explicit(word, memory_order_relaxed) & SPINDLE_LANE_COUNT_MASK;
}

/// Producer, between begin and publish, for an emit of one event: its
/// slot's payload area, uninitialized (linking a block when the current one
/// is full). A batch takes its slots with `spindle_lane_slots`. NULL on
/// exhaustion, or when a bounded lane is full (`spindle_lane_has_room`
/// tells which): abort. Stores nothing unless it links a block or re-reads
/// a bounded lane's room.
static inline __attribute__((always_inline)) void *spindle_lane_slot(spindle_lane *lane) {
    struct spindle_lane_producer *producer = (struct spindle_lane_producer *)lane;
    uint64_t published = spindle_lane_published_producer(lane);
    if (__builtin_expect(published >= producer->limit, 0) && !spindle_lane_has_room(lane)) return NULL;
    uint64_t index = published - producer->block_base;
    if (__builtin_expect(index == producer->tail_capacity, 0))
        return spindle_lane_slot_in_next_block(lane, 0);
    return (char *)producer->tail_block + producer->payload_offset + (size_t)index * producer->stride;
}

/// Producer: publishes the `count` slots taken since begin (a release store
/// of the lane word), then ends the emit. `count` may be 0.
static inline __attribute__((always_inline)) void spindle_lane_publish(spindle_lane *lane, size_t count) {
    // The count first (release: the payloads happen-before the runner's
    // acquire load), then the end of the emit (release: the count
    // happens-before a runner that sees BUSY clear).
    _Atomic uint64_t *word = (_Atomic uint64_t *)((char *)lane + SPINDLE_LANE_WORD_OFFSET);
    atomic_store_explicit(word, spindle_lane_published_producer(lane) + count, memory_order_release);
    spindle_lane_abort(lane);
}

// MARK: - Per-producer lanes: the whole emit, inlined into the caller

/// A loop's hot words: the one definition of their layout. `LoopWords.swift`
/// places each word at its offset here; this header's inlined emit reads
/// the first three (the runner's thread token, the scheduling state,
/// `closed`).
#define SPINDLE_WORDS_RUNNER_TOKEN_OFFSET 0      // uintptr_t
#define SPINDLE_WORDS_ACCEPTED_COUNT_OFFSET 8    // intptr_t
#define SPINDLE_WORDS_SCHEDULING_OFFSET 16       // uint8_t: SchedulingState
#define SPINDLE_WORDS_CLOSED_OFFSET 17           // bool
#define SPINDLE_WORDS_STOP_REQUEST_OFFSET 18     // uint8_t: StopRequest
#define SPINDLE_WORDS_GRACE_DONE_OFFSET 19       // bool
#define SPINDLE_WORDS_OBSERVERS_CREATED_OFFSET 20  // bool
#define SPINDLE_WORDS_SETTLE_PENDING_OFFSET 21   // bool
#define SPINDLE_WORDS_SIZE 24
/// `SchedulingState.running`: a loop in this state or the next (finished)
/// needs no wake-up look after an emit; idle and scheduled do.
#define SPINDLE_SCHEDULING_RUNNING 2

/// Producer: starts an emit on `lane` (its BUSY store), then reads the
/// `closed` word of the loop whose words are at `words`: false, with the
/// emit ended, when the loop is closed. The load may pass the BUSY store
/// (a plain store); a stop's last slice calls membarrier before it reads
/// BUSY, so either it sees this emit under way, or this load sees `closed`
/// (LANES.md, "v2, as built"). Every lane emit starts here.
static inline __attribute__((always_inline)) bool spindle_lane_begin_unless_closed(
    spindle_lane *lane, const void *words) {
    spindle_lane_begin(lane);
    const _Atomic bool *closed = (const _Atomic bool *)((const char *)words + SPINDLE_WORDS_CLOSED_OFFSET);
    if (atomic_load_explicit(closed, memory_order_relaxed)) {
        spindle_lane_abort(lane);
        return false;
    }
    return true;
}

/// Producer, the fast path's first half (`SpinLoop.emit`, compiled into
/// the caller so that it spills nothing: each store it saves is one more
/// emit the store buffer holds while a line is on its way from the other
/// core): when the calling thread has a lane into the loop whose words are
/// at `words` and is not its runner, starts an emit on it (BUSY, then the
/// `closed` load) and returns the lane, with the slot to fill in `*slot`.
/// NULL with nothing changed in every other case (no lane, the runner, a
/// closed loop, no memory for a block): the caller takes the full path.
static inline __attribute__((always_inline)) spindle_lane *spindle_lane_fast_reserve(
    uint64_t loop_id, const void *words, void **slot) {
    spindle_lane *lane = spindle_lane_current(loop_id);
    if (lane == NULL) return NULL;
    const _Atomic uintptr_t *runner =
        (const _Atomic uintptr_t *)((const char *)words + SPINDLE_WORDS_RUNNER_TOKEN_OFFSET);
    if (atomic_load_explicit(runner, memory_order_relaxed) == spindle_thread_token()) return NULL;
    if (!spindle_lane_begin_unless_closed(lane, words)) return NULL;
    void *payload = spindle_lane_slot(lane);
    if (payload == NULL) {
        spindle_lane_abort(lane);
        return NULL;
    }
    *slot = payload;
    return lane;
}

/// Producer, the fast path's second half: publishes the slot filled since
/// `spindle_lane_fast_reserve`, ends the emit, then loads the loop's
/// scheduling state (as `wake()` does, after the publish): below
/// `SPINDLE_SCHEDULING_RUNNING` the caller takes the wake-up path.
static inline __attribute__((always_inline)) uint8_t spindle_lane_fast_publish(spindle_lane *lane, const void *words) {
    spindle_lane_publish(lane, 1);
    const _Atomic uint8_t *state = (const _Atomic uint8_t *)((const char *)words + SPINDLE_WORDS_SCHEDULING_OFFSET);
    return atomic_load_explicit(state, memory_order_seq_cst);
}

/// Runner: true when a lane holds a published slot the runner has not
/// taken. A hint (relaxed loads, BUSY not read): for the runner's linger.
bool spindle_lane_set_has_published_consumer(spindle_lane_set *set);
/// Registers the process for membarrier, once; true when the asymmetric
/// fence is in use (lane emits then cost no fence). `spindle_lane_set_init`
/// calls it, so it runs before the first lane of any loop.
bool spindle_lanes_prepare(void);
/// The heavy side of the asymmetric fence (membarrier), or a full fence.
void spindle_lanes_heavy_fence(void);

#ifdef __cplusplus
}
#endif

#endif // SPINDLE_LANE_H
