// Per-producer lanes: a single-producer / single-consumer queue of
// fixed-size payloads in linked blocks, for one hot producer thread of one
// loop. The protocol (the BUSY generation, the lane word with EXITED and
// ORPHANED, the marker that opens a lane, the idle edge, stop) is
// Sources/Spindle/Runtime/Scheduling/Model/LANES.md ("v2, as built"),
// model-checked by lanes.pml beside it. This file holds the memory: blocks
// and their reuse, the thread's table of lanes, the runner's lane set, and
// who frees a lane.
//
// The lanes themselves use C11 atomics, which TSan sees. liburcu serves the
// runner's lane set (an RCU-published array, read in a urcu-bp read-side
// section) and the deferred frees (call_rcu), whose ordering TSan is told
// about explicitly.
#define _GNU_SOURCE  // syscall(2)
#include <urcu/urcu-bp.h>

#include "CSpindle.h"
#include "spindle_internal.h"

#ifdef SPINDLE_LINUX
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

// A lane whose emits find the loop idle this often (hits within a window
// of published events) is let go: each idle transition of a loop with
// lanes costs the runner a membarrier, which a loop that idles after
// nearly every event should not pay.
#define SPINDLE_LANE_IDLE_HITS 4
#define SPINDLE_LANE_IDLE_WINDOW 64

// New blocks double in size up to this many slots, so that a lane whose
// backlog grows allocates a logarithmic number of times (as the shared
// queue's slabs do), and keeps them.
#define SPINDLE_LANE_MAX_BLOCK_SLOTS 4096u

// Three lines: the producer's (`struct spindle_lane_producer`, in
// CSpindle.h for the inline fast path: its BUSY word and cursor), the
// published count (the line the runner polls), then the runner's.
struct spindle_lane {
    _Alignas(SPINDLE_CACHE_LINE) struct spindle_lane_producer producer;
    // The lane word: the count of published slots (release store per
    // publish), plus the EXITED and ORPHANED flags (fetch_or, never while
    // an emit is under way).
    _Alignas(SPINDLE_CACHE_LINE) _Atomic uint64_t word;
    // Rarely touched, so they share the word's line: the loop (immutable),
    // and the producer's count of emits that found the loop idle.
    uint64_t loop_id;
    uint64_t idle_window_start;             // producer only: its published count when idle_hits began
    uint32_t idle_hits;                     // producer only: emits that found the loop idle, in the window
    struct rcu_head rcu;                    // a deferred free (spindle_lane_destroy_deferred)
    // Drained blocks on their way back to the producer: the runner gathers
    // them in `drained` and hands the chain over when `handed` is empty;
    // the producer takes the whole chain when its own runs out. Blocks are
    // kept, not freed, so a lane in steady state allocates nothing (it keeps
    // as many blocks as its largest backlog needed, as the shared queue
    // keeps its node slabs).
    // Runner's line (and `handed`, which the producer reads once a block).
    _Alignas(SPINDLE_CACHE_LINE) _Atomic(struct spindle_lane_block *) handed;
    struct spindle_lane_block *head_block;  // runner only
    uint32_t head_index;                    // runner only
    // The producer's payload_offset and stride, copied: reading them from
    // the producer's line would pull it away from the producer every run.
    uint32_t payload_offset;                // runner only, immutable
    uint32_t stride;                        // runner only, immutable
    // Slots taken: written by the runner only (relaxed), read by a thread
    // re-checking an idle loop (which may no longer be its runner).
    _Atomic uint64_t consumed;
    uint64_t published;                     // runner only: last count read from the word
    struct spindle_lane_block *drained;     // runner only: blocks not yet handed over
};

_Static_assert(sizeof(struct spindle_lane) == 3 * SPINDLE_CACHE_LINE, "a lane header is three lines");
_Static_assert(offsetof(struct spindle_lane, word) == SPINDLE_LANE_WORD_OFFSET, "the inline publish finds the word");
_Static_assert(sizeof(struct spindle_lane_producer) <= SPINDLE_CACHE_LINE, "the producer's fields fit its line");

uint32_t spindle_lane_streak_setting = 64;
uint64_t spindle_lane_next_loop_id_value = 1;

static _Atomic long live_lanes;
static _Atomic long created_lanes;

static struct spindle_lane_block *block_new(const struct spindle_lane *lane, uint32_t capacity) {
    size_t bytes = (size_t)lane->producer.payload_offset + (size_t)lane->producer.stride * capacity;
    struct spindle_lane_block *block = aligned_alloc(SPINDLE_CACHE_LINE, spindle_round_up(bytes, SPINDLE_CACHE_LINE));
    if (block) {
        atomic_init(&block->next, NULL);
        block->capacity = capacity;
    }
    return block;
}

static inline char *slot_address(uint32_t payload_offset, uint32_t stride, struct spindle_lane_block *block, uint32_t index) {
    return (char *)block + payload_offset + (size_t)index * stride;
}

spindle_lane *spindle_lane_create(uint64_t loop_id, size_t payload_size, size_t payload_align,
                                  size_t slots_per_block) {
    if (payload_align == 0 || (payload_align & (payload_align - 1)) != 0 || payload_align > SPINDLE_CACHE_LINE)
        return NULL;
    if (slots_per_block < 2) slots_per_block = 2;
    struct spindle_lane *lane = aligned_alloc(SPINDLE_CACHE_LINE, sizeof *lane);
    if (!lane) return NULL;
    memset(lane, 0, sizeof *lane);
    atomic_init(&lane->word, 0);
    atomic_init(&lane->producer.busy, 0);
    atomic_init(&lane->handed, NULL);
    atomic_init(&lane->consumed, 0);
    lane->loop_id = loop_id;
    if (slots_per_block > SPINDLE_LANE_MAX_BLOCK_SLOTS) slots_per_block = SPINDLE_LANE_MAX_BLOCK_SLOTS;
    lane->producer.next_capacity = (uint32_t)slots_per_block;
    lane->producer.payload_offset = (uint32_t)spindle_round_up(sizeof(struct spindle_lane_block), payload_align);
    lane->producer.stride = (uint32_t)spindle_round_up(payload_size ? payload_size : 1, payload_align);
    lane->payload_offset = lane->producer.payload_offset;
    lane->stride = lane->producer.stride;
    lane->producer.limit = UINT64_MAX;
    struct spindle_lane_block *first = block_new(lane, lane->producer.next_capacity);
    if (!first) {
        free(lane);
        return NULL;
    }
    lane->producer.tail_block = first;
    lane->producer.tail_capacity = first->capacity;
    lane->head_block = first;
    atomic_fetch_add_explicit(&live_lanes, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&created_lanes, 1, memory_order_relaxed);
    return lane;
}

static void free_blocks(struct spindle_lane_block *block) {
    while (block) {
        struct spindle_lane_block *next = atomic_load_explicit(&block->next, memory_order_acquire);
        free(block);
        block = next;
    }
}

void spindle_lane_destroy(spindle_lane *lane) {
    // The blocks in use, and the three chains of drained ones.
    free_blocks(lane->head_block);
    free_blocks(lane->producer.free_chain);
    free_blocks(atomic_load_explicit(&lane->handed, memory_order_acquire));
    free_blocks(lane->drained);
    free(lane);
    atomic_fetch_sub_explicit(&live_lanes, 1, memory_order_relaxed);
}

static void lane_destroy_rcu(struct rcu_head *head) {
    spindle_lane *lane = caa_container_of(head, struct spindle_lane, rcu);
    // The grace period orders every re-check's reads before this free;
    // TSan cannot see liburcu's, so the re-checks release and this acquires.
    SPINDLE_TSAN_ACQUIRE(lane);
    spindle_lane_destroy(lane);
}

void spindle_lane_destroy_deferred(spindle_lane *lane) {
    // The caller's last accesses (and, through the atomics that made it the
    // one to free the lane, every other thread's) happen-before the free;
    // TSan cannot see call_rcu's queue, so say so (acquired in
    // lane_destroy_rcu).
    SPINDLE_TSAN_RELEASE(lane);
    urcu_bp_call_rcu(&lane->rcu, lane_destroy_rcu);
}

long spindle_lanes_created(void) { return atomic_load_explicit(&created_lanes, memory_order_relaxed); }

long spindle_live_lanes(void) { return atomic_load_explicit(&live_lanes, memory_order_relaxed); }

// MARK: Producer

// The asymmetric fence (liburcu-memb's trade): producers order their BUSY
// store before their load of `closed` with a compiler barrier only; the
// rare side (an idle re-check, a stop) calls membarrier, which runs a full
// barrier on every thread of the process. Without membarrier (old
// kernels, other systems, SPINDLE_PORTABLE), producers issue the fence
// themselves.
_Atomic bool spindle_lanes_asymmetric;  // read by the inline spindle_lane_begin
static pthread_once_t asymmetric_once = PTHREAD_ONCE_INIT;

#ifdef SPINDLE_LINUX
static long sys_membarrier(int cmd) { return syscall(__NR_membarrier, cmd, 0, 0); }

static void asymmetric_init(void) {
    long supported = sys_membarrier(MEMBARRIER_CMD_QUERY);
    bool usable = supported > 0 && (supported & MEMBARRIER_CMD_PRIVATE_EXPEDITED)
        && sys_membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
    atomic_store_explicit(&spindle_lanes_asymmetric, usable, memory_order_relaxed);
}
#else
static void asymmetric_init(void) {
    atomic_store_explicit(&spindle_lanes_asymmetric, false, memory_order_relaxed);
}
#endif

bool spindle_lanes_prepare(void) {
    pthread_once(&asymmetric_once, asymmetric_init);
    return atomic_load_explicit(&spindle_lanes_asymmetric, memory_order_relaxed);
}

void spindle_lanes_heavy_fence(void) {
#ifdef SPINDLE_LINUX
    if (atomic_load_explicit(&spindle_lanes_asymmetric, memory_order_relaxed)) {
        sys_membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED);
        return;
    }
#endif
    atomic_thread_fence(memory_order_seq_cst);
}

// spindle_lane_begin, _slot, _publish and _abort are inline (CSpindle.h).

// A bounded lane's producer: re-reads the runner's count and returns the
// new limit. Acquire, as `spindle_lane_drained`: the runner's count is
// stored after it moved the events out. (Slots are never reused by
// position, so the room is a count, not a memory hand-over.)
static uint64_t lane_refresh_limit(spindle_lane *lane) {
    struct spindle_lane_producer *producer = &lane->producer;
    producer->limit = atomic_load_explicit(&lane->consumed, memory_order_acquire) + producer->budget;
    return producer->limit;
}

void spindle_lane_set_budget(spindle_lane *lane, uint32_t budget) {
    lane->producer.budget = budget;
    if (budget == 0) {
        lane->producer.limit = UINT64_MAX;
    } else {
        lane_refresh_limit(lane);
    }
}

bool spindle_lane_has_room(spindle_lane *lane) {
    if (lane->producer.budget == 0) return true;
    return spindle_lane_published_producer(lane) < lane_refresh_limit(lane);
}

bool spindle_lane_was_full(spindle_lane *lane) {
    return lane->producer.budget != 0 && spindle_lane_published_producer(lane) >= lane->producer.limit;
}

void *spindle_lane_slot_in_next_block(spindle_lane *lane, size_t reserved) {
    struct spindle_lane_producer *producer = &lane->producer;
    if (producer->free_chain == NULL && atomic_load_explicit(&lane->handed, memory_order_relaxed) != NULL)
        producer->free_chain = atomic_exchange_explicit(&lane->handed, NULL, memory_order_acquire);
    struct spindle_lane_block *next = producer->free_chain;
    if (next) {
        producer->free_chain = atomic_load_explicit(&next->next, memory_order_relaxed);
        atomic_store_explicit(&next->next, NULL, memory_order_relaxed);
    } else {
        if (producer->next_capacity < SPINDLE_LANE_MAX_BLOCK_SLOTS) producer->next_capacity *= 2;
        next = block_new(lane, producer->next_capacity);
        if (!next) return NULL;
    }
    // Linked before any slot in it is published (the publish is a
    // release), so the runner finds the link when it gets there.
    atomic_store_explicit(&producer->tail_block->next, next, memory_order_relaxed);
    producer->tail_block = next;
    producer->tail_capacity = next->capacity;
    producer->block_base = spindle_lane_published_producer(lane) + reserved;
    return slot_address(producer->payload_offset, producer->stride, next, 0);
}

void *spindle_lane_slots(spindle_lane *lane, size_t reserved, size_t max, size_t *count) {
    struct spindle_lane_producer *producer = &lane->producer;
    *count = 0;
    if (max == 0) return NULL;
    uint64_t next = spindle_lane_published_producer(lane) + reserved;
    // An unbounded lane's limit is UINT64_MAX: never reached.
    if (next >= producer->limit && next >= lane_refresh_limit(lane)) return NULL;
    if (producer->limit - next < max) max = (size_t)(producer->limit - next);
    uint64_t index = next - producer->block_base;
    void *first;
    if (index == producer->tail_capacity) {
        first = spindle_lane_slot_in_next_block(lane, reserved);
        if (first == NULL) return NULL;
        index = 0;
    } else {
        first = slot_address(producer->payload_offset, producer->stride, producer->tail_block, (uint32_t)index);
    }
    size_t room = producer->tail_capacity - index;
    *count = room < max ? room : max;
    return first;
}

// MARK: Runner

uint64_t spindle_lane_word(const spindle_lane *lane) {
    return atomic_load_explicit(&((spindle_lane *)lane)->word, memory_order_seq_cst);
}

size_t spindle_lane_available_consumer(spindle_lane *lane) {
    uint64_t word = atomic_load_explicit(&lane->word, memory_order_acquire);
    lane->published = word & SPINDLE_LANE_COUNT_MASK;
    return (size_t)(lane->published - atomic_load_explicit(&lane->consumed, memory_order_relaxed));
}

void *spindle_lane_run_consumer(spindle_lane *lane, size_t max, size_t *count) {
    uint64_t consumed = atomic_load_explicit(&lane->consumed, memory_order_relaxed);
    uint64_t waiting = lane->published - consumed;
    if (waiting == 0 || max == 0) {
        *count = 0;
        return NULL;
    }
    if (lane->head_index == lane->head_block->capacity) {
        struct spindle_lane_block *done = lane->head_block;
        struct spindle_lane_block *next = atomic_load_explicit(&done->next, memory_order_relaxed);
        lane->head_block = next;
        lane->head_index = 0;
        // Keep the drained block for the producer; hand the chain over
        // when the producer has taken the last one.
        atomic_store_explicit(&done->next, lane->drained, memory_order_relaxed);
        lane->drained = done;
        if (atomic_load_explicit(&lane->handed, memory_order_relaxed) == NULL) {
            atomic_store_explicit(&lane->handed, lane->drained, memory_order_release);
            lane->drained = NULL;
        }
    }
    size_t in_block = lane->head_block->capacity - lane->head_index;
    size_t run = waiting < in_block ? (size_t)waiting : in_block;
    *count = run < max ? run : max;
    return slot_address(lane->payload_offset, lane->stride, lane->head_block, lane->head_index);
}

void spindle_lane_consumed(spindle_lane *lane, size_t count) {
    lane->head_index += (uint32_t)count;
    // Release: a producer that sees its lane drained (spindle_lane_drained)
    // sees these events reduced.
    atomic_store_explicit(&lane->consumed, atomic_load_explicit(&lane->consumed, memory_order_relaxed) + count,
                          memory_order_release);
}

void *spindle_lane_next_consumer(spindle_lane *lane) {
    size_t count;
    void *payload = spindle_lane_run_consumer(lane, 1, &count);
    if (payload) spindle_lane_consumed(lane, 1);
    return payload;
}

bool spindle_lane_release_loop(spindle_lane *lane) {
    uint64_t old = atomic_fetch_or_explicit(&lane->word, SPINDLE_LANE_ORPHANED, memory_order_acq_rel);
    if (old & SPINDLE_LANE_EXITED) {
        spindle_lane_destroy(lane);
        return true;
    }
    return false;
}

// MARK: The thread's table

// The entry and table types are in CSpindle.h (the inline
// spindle_lane_current reads the table).
_Thread_local struct spindle_lane_table spindle_lane_thread_table;
static pthread_key_t lane_key;
static pthread_once_t lane_key_once = PTHREAD_ONCE_INIT;

// The thread's side of a lane's end: EXITED, unless the loop is gone, in
// which case nobody else will free it.
static void lane_let_go(spindle_lane *lane) {
    uint64_t old = atomic_fetch_or_explicit(&lane->word, SPINDLE_LANE_EXITED, memory_order_acq_rel);
    // Deferred: a thread re-checking an idle loop may be reading the word.
    if (old & SPINDLE_LANE_ORPHANED) spindle_lane_destroy_deferred(lane);
}

// A drained lane's entry lets it go; the loop's next emits from this
// thread go through the shared queue, counting a new streak.
static void entry_let_go(struct spindle_lane_entry *entry) {
    lane_let_go(entry->lane);
    *entry = (struct spindle_lane_entry){.loop_id = entry->loop_id, .lane = NULL, .streak = 0};
}

static void lane_thread_exit(void *unused) {
    (void)unused;
    for (int i = 0; i < SPINDLE_LANE_TABLE_SIZE; i++) {
        struct spindle_lane_entry *entry = &spindle_lane_thread_table.entries[i];
        if (entry->lane) lane_let_go(entry->lane);
        *entry = (struct spindle_lane_entry){0};
    }
}

static void lane_key_create(void) { pthread_key_create(&lane_key, lane_thread_exit); }

spindle_lane *spindle_lane_lookup(uint64_t loop_id, uint32_t streak_to_open, bool *should_open) {
    struct spindle_lane_entry *entry = &spindle_lane_thread_table.entries[spindle_lane_table_slot(loop_id)];
    *should_open = false;
    if (entry->loop_id == loop_id) {
        if (entry->lane) {
            if (entry->let_go_pending) {
                // The loop kept idling (spindle_lane_note_idle): let the
                // lane go now that its events are reduced, and emit through
                // the shared queue from here on.
                if (spindle_lane_drained(entry->lane)) {
                    entry_let_go(entry);
                    return NULL;
                }
                // A window with no idle emit since: the loop is busy again,
                // and the lane serves it. Back to the fast path.
                if (spindle_lane_published_producer(entry->lane) - entry->lane->idle_window_start > SPINDLE_LANE_IDLE_WINDOW) {
                    entry->let_go_pending = false;
                }
            }
            return entry->lane;
        }
        if (++entry->streak >= streak_to_open) *should_open = true;
        return NULL;
    }
    // Another loop's entry (or none): this loop starts a streak there. A
    // lane still holding events stays: letting it go now would let this
    // thread's next emits into that loop (through its shared queue) pass
    // them. This loop then goes without a streak until the lane drains.
    if (entry->lane) {
        if (!spindle_lane_drained(entry->lane)) return NULL;
        lane_let_go(entry->lane);
    }
    *entry = (struct spindle_lane_entry){.loop_id = loop_id, .lane = NULL, .streak = 1};
    if (streak_to_open <= 1) *should_open = true;
    return NULL;
}

bool spindle_lane_install(spindle_lane *lane) {
    pthread_once(&lane_key_once, lane_key_create);
    if (!spindle_lane_thread_table.registered) {
        // Any non-NULL value: the destructor runs only for those.
        if (pthread_setspecific(lane_key, &spindle_lane_thread_table) != 0) return false;
        spindle_lane_thread_table.registered = true;
    }
    struct spindle_lane_entry *entry = &spindle_lane_thread_table.entries[spindle_lane_table_slot(lane->loop_id)];
    if (entry->lane) lane_let_go(entry->lane);
    *entry = (struct spindle_lane_entry){.loop_id = lane->loop_id, .lane = lane, .streak = 0};
    return true;
}


// MARK: A loop's lanes

// The lanes a loop's runner reads, as an array published with RCU: the
// runner replaces it (a copy) when a marker adds a lane or a lane leaves;
// any thread may scan it inside a gate section (the idle re-check); old
// arrays and the lanes that leave are freed after a grace period.
struct spindle_lane_array {
    struct rcu_head rcu;
    size_t count;
    spindle_lane *lanes[];
};

struct spindle_lane_set {
    _Atomic(struct spindle_lane_array *) current;  // NULL: no lane
};

_Static_assert(sizeof(spindle_lane_set) == SPINDLE_LANE_SET_SIZE, "SPINDLE_LANE_SET_SIZE is the set's size");

size_t spindle_lane_set_size(void) { return sizeof(spindle_lane_set); }

spindle_lane_set *spindle_lane_set_init(void *memory) {
    // Every lane belongs to a set, so membarrier is registered (or found
    // missing) before the first lane exists.
    spindle_lanes_prepare();
    spindle_lane_set *set = memory;
    atomic_init(&set->current, NULL);
    return set;
}

static void lane_array_free_rcu(struct rcu_head *head) {
    struct spindle_lane_array *array = caa_container_of(head, struct spindle_lane_array, rcu);
    SPINDLE_TSAN_ACQUIRE(array);  // see lane_destroy_rcu
    free(array);
}

// Test hook: the calling thread's next `count` lane-array allocations fail,
// so that the out-of-memory paths of add and remove can be tested. Thread
// local: a parallel test's loops never see it.
static _Thread_local unsigned lane_array_failures;

void spindle_lane_set_fail_allocations(unsigned count) { lane_array_failures = count; }

static struct spindle_lane_array *lane_array_alloc(size_t count) {
    if (lane_array_failures) {
        lane_array_failures--;
        return NULL;
    }
    return malloc(sizeof(struct spindle_lane_array) + count * sizeof(spindle_lane *));
}

static bool lane_set_publish(spindle_lane_set *set, struct spindle_lane_array *next) {
    struct spindle_lane_array *old = atomic_exchange_explicit(&set->current, next, memory_order_acq_rel);
    if (old) {
        SPINDLE_TSAN_RELEASE(old);  // see spindle_lane_destroy_deferred
        urcu_bp_call_rcu(&old->rcu, lane_array_free_rcu);
    }
    return true;
}

bool spindle_lane_set_add_consumer(spindle_lane_set *set, spindle_lane *lane) {
    struct spindle_lane_array *old = atomic_load_explicit(&set->current, memory_order_relaxed);
    size_t count = old ? old->count : 0;
    struct spindle_lane_array *next = lane_array_alloc(count + 1);
    if (!next) return false;
    next->count = count + 1;
    if (count) memcpy(next->lanes, old->lanes, count * sizeof(spindle_lane *));
    next->lanes[count] = lane;
    return lane_set_publish(set, next);
}

bool spindle_lane_set_remove_consumer(spindle_lane_set *set, size_t index) {
    struct spindle_lane_array *old = atomic_load_explicit(&set->current, memory_order_relaxed);
    if (!old || index >= old->count) return false;
    struct spindle_lane_array *next = NULL;
    if (old->count > 1) {
        next = lane_array_alloc(old->count - 1);
        if (!next) return false;  // the lane stays listed: the caller must not free it
        next->count = old->count - 1;
        memcpy(next->lanes, old->lanes, index * sizeof(spindle_lane *));
        memcpy(next->lanes + index, old->lanes + index + 1, (old->count - index - 1) * sizeof(spindle_lane *));
    }
    return lane_set_publish(set, next);
}

size_t spindle_lane_set_count_consumer(spindle_lane_set *set) {
    struct spindle_lane_array *array = atomic_load_explicit(&set->current, memory_order_relaxed);
    return array ? array->count : 0;
}

spindle_lane *spindle_lane_set_at_consumer(spindle_lane_set *set, size_t index) {
    return atomic_load_explicit(&set->current, memory_order_relaxed)->lanes[index];
}

bool spindle_lane_set_looks_runnable(spindle_lane_set *set, bool fence) {
    if (!atomic_load_explicit(&set->current, memory_order_relaxed)) return false;
    // After the caller's store (IDLE, or `closed` before a stop's last
    // slice): every producer's BUSY store or publish before this point is
    // seen below, and every later one sees the caller's store.
    if (fence) spindle_lanes_heavy_fence();
    bool runnable = false;
    urcu_bp_read_lock();
    struct spindle_lane_array *array = atomic_load_explicit(&set->current, memory_order_acquire);
    for (size_t i = 0; array && i < array->count && !runnable; i++) {
        spindle_lane *lane = array->lanes[i];
        // BUSY first, then the published count. An emit under way at the
        // fence is BUSY here, or it has ended, and then its end (a release
        // store after its publish) makes its count visible to the load
        // below. The other order loses an event: the count read before the
        // emit publishes, BUSY after it ends, and a stop's last slice
        // finishes with the event in the lane (lanes.pml,
        // BROKEN_COUNT_FIRST).
        bool busy = (atomic_load_explicit(&lane->producer.busy, memory_order_acquire) & 1) != 0;
        uint64_t word = atomic_load_explicit(&lane->word, memory_order_acquire);
        runnable = busy
            || (word & SPINDLE_LANE_COUNT_MASK) != atomic_load_explicit(&lane->consumed, memory_order_relaxed);
        SPINDLE_TSAN_RELEASE(lane);
    }
    if (array) SPINDLE_TSAN_RELEASE(array);
    urcu_bp_read_unlock();
    return runnable;
}

bool spindle_lane_set_has_published_consumer(spindle_lane_set *set) {
    // The runner owns the array (it alone replaces it), so no read-side
    // section; BUSY is not read, so the producers' line stays theirs.
    struct spindle_lane_array *array = atomic_load_explicit(&set->current, memory_order_relaxed);
    if (!array) return false;
    for (size_t i = 0; i < array->count; i++) {
        spindle_lane *lane = array->lanes[i];
        uint64_t word = atomic_load_explicit(&lane->word, memory_order_relaxed);
        if ((word & SPINDLE_LANE_COUNT_MASK) != atomic_load_explicit(&lane->consumed, memory_order_relaxed)) return true;
    }
    return false;
}

void spindle_lane_set_deinit(spindle_lane_set *set) {
    struct spindle_lane_array *array = atomic_exchange_explicit(&set->current, NULL, memory_order_acq_rel);
    if (array) {
        for (size_t i = 0; i < array->count; i++) spindle_lane_release_loop(array->lanes[i]);
        SPINDLE_TSAN_RELEASE(array);
        urcu_bp_call_rcu(&array->rcu, lane_array_free_rcu);
    }
}

void spindle_lane_let_go(spindle_lane *lane) { lane_let_go(lane); }

bool spindle_lane_reclaim_consumer(spindle_lane *lane) {
    uint64_t word = atomic_load_explicit(&lane->word, memory_order_acquire);
    uint64_t consumed = atomic_load_explicit(&lane->consumed, memory_order_relaxed);
    // EXITED is set after the thread's last emit ended: drained means done.
    return (word & SPINDLE_LANE_EXITED) && (word & SPINDLE_LANE_COUNT_MASK) == consumed;
}

bool spindle_lane_drained(spindle_lane *lane) {
    return atomic_load_explicit(&lane->consumed, memory_order_acquire) == spindle_lane_published_producer(lane);
}

void spindle_lane_note_idle(uint64_t loop_id, spindle_lane *lane) {
    uint64_t published = spindle_lane_published_producer(lane);
    if (published - lane->idle_window_start > SPINDLE_LANE_IDLE_WINDOW) {
        lane->idle_window_start = published;
        lane->idle_hits = 0;
    }
    if (lane->idle_hits < SPINDLE_LANE_IDLE_HITS) lane->idle_hits++;
    if (lane->idle_hits < SPINDLE_LANE_IDLE_HITS) return;
    struct spindle_lane_entry *entry = &spindle_lane_thread_table.entries[spindle_lane_table_slot(loop_id)];
    if (entry->loop_id != loop_id || entry->lane != lane) return;
    // The emit that got here has just published an event the loop has not
    // reduced (it found the loop idle), so the lane is seldom drained now:
    // the let-go waits for the thread's next emit into the loop (its lookup),
    // and the fast path steps aside until then.
    if (spindle_lane_drained(lane)) {
        entry_let_go(entry);
    } else {
        entry->let_go_pending = true;
    }
}

void spindle_lane_reset_streak(uint64_t loop_id) {
    struct spindle_lane_entry *entry = &spindle_lane_thread_table.entries[spindle_lane_table_slot(loop_id)];
    if (entry->loop_id == loop_id && entry->lane == NULL) entry->streak = 0;
}
