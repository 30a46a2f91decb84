// The unbounded MPSC event queue: liburcu's wait-free concurrent queue
// (wfcqueue) with pooled nodes that carry the payload inline.
//
// Why this shape:
// - Swift cannot call liburcu's transparent-union functions, so every call is
//   wrapped here behind plain pointers.
// - liburcu's blocking splice/dequeue sleeps a fixed 10 ms when it meets a
//   producer mid-enqueue; we use the _nonblocking calls with a short backoff.
// - Boxing each event on the heap costs ~3x throughput here, so nodes come
//   from slabs and return to a lock-free free list (a Treiber stack indexed by
//   32-bit node numbers with a 32-bit ABA tag, in C11 atomics that TSan sees).
// - liburcu is linked dynamically (no _LGPL_SOURCE); see README, "Licence".
#include "CSpindle.h"
#include "spindle_internal.h"

#if !defined(__has_include) || !__has_include(<urcu/wfcqueue.h>)
#error "Spindle needs liburcu's headers: install them with `apt-get install -y liburcu-dev`"
#endif
#include <urcu/wfcqueue.h>

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define SPINDLE_WFQ_MAX_SLABS 28  // 8 << 28 nodes at most: indices fit in 32 bits
#define SPINDLE_WFQ_INLINE_SLABS 2 // slab pointers kept in the header itself
#define SPINDLE_WFQ_RELEASE_FLUSH 256
#define SPINDLE_WFQ_RELEASE_MIN_CHAIN 64

struct spindle_wfq_node {
    struct cds_wfcq_node link;   // queue link (liburcu)
    _Atomic uint32_t free_next;  // free list: index + 1 of the next free node, 0 = end
    uint32_t index;              // this node's number (< 2^31); immutable after creation but for
                                 // the marker bit, which only the node's owner touches (see Markers)
};
_Static_assert(sizeof(struct spindle_wfq_node) == 16, "node header is 16 bytes");

// Two cache lines, 128 bytes: an idle loop owns one of these, so every byte
// counts a million times (starting many loops is dominated by the kernel
// zeroing fresh pages). Hence two inline slab addresses rather than the full
// table, and a one-byte spin lock rather than a pthread mutex.
struct spindle_wfq {
    // The producers' line: everything an emit touches. The tail they
    // exchange; the free list head they pop ((tag << 32) | (index + 1);
    // atomic: any thread; the consumer pushes to it once per
    // SPINDLE_WFQ_RELEASE_FLUSH events, so sharing the line costs it one
    // transfer per flush, and saves each emit a second line); what is
    // immutable after create; the first slabs' addresses, then the rest's in
    // a table allocated when the pool first grows past them (both grow under
    // grow_lock and are read lock-free with acquire).
    _Alignas(SPINDLE_CACHE_LINE) struct cds_wfcq_tail tail;
    _Atomic uint64_t free_head;
    _Atomic(char *) slabs[SPINDLE_WFQ_INLINE_SLABS];
    _Atomic(_Atomic(char *) *) more_slabs;  // slabs INLINE_SLABS..MAX_SLABS-1
    uint32_t payload_offset;
    uint32_t node_stride;
    _Atomic uint32_t allocated_nodes;
    uint8_t base_shift;    // slab k holds (1 << (base_shift + k)) nodes
    uint8_t slab_count;    // protected by grow_lock
    atomic_flag grow_lock; // a spin lock: taken only to add a slab
    // The consumer's line: the shared head (read by splice, written by the
    // first enqueue after empty), then, consumer only, the private batch, the
    // chain of nodes it has finished with (returned to the free list in one
    // CAS), and its own copy of the payload offset (so that reading an event
    // never touches the producers' line).
    _Alignas(SPINDLE_CACHE_LINE) struct __cds_wfcq_head head;
    struct __cds_wfcq_head batch_head;
    struct cds_wfcq_tail batch_tail;
    struct spindle_wfq_node *cursor;
    struct spindle_wfq_node *release_first;
    struct spindle_wfq_node *release_last;
    uint32_t release_count;
    uint32_t consumer_payload_offset;
};

_Static_assert(offsetof(struct spindle_wfq, head) == SPINDLE_CACHE_LINE,
               "the producers' fields fit on the first line; the consumer's head starts the second");
_Static_assert(sizeof(struct spindle_wfq) == 2 * SPINDLE_CACHE_LINE,
               "the queue header is two cache lines");

static inline unsigned log2_floor(uint64_t value) {
    return 63u - (unsigned)__builtin_clzll(value);
}

// Slab k's address (it must exist). Any thread.
static inline char *slab_at(spindle_wfq *q, unsigned k) {
    if (k < SPINDLE_WFQ_INLINE_SLABS) return atomic_load_explicit(&q->slabs[k], memory_order_acquire);
    _Atomic(char *) *more = atomic_load_explicit(&q->more_slabs, memory_order_acquire);
    return atomic_load_explicit(&more[k - SPINDLE_WFQ_INLINE_SLABS], memory_order_acquire);
}

// Node number -> node. Slab k starts at number (2^k - 1) << base_shift.
static inline struct spindle_wfq_node *node_at(spindle_wfq *q, uint32_t index) {
    uint64_t j = (uint64_t)index + ((uint64_t)1 << q->base_shift);
    unsigned k = log2_floor(j) - q->base_shift;
    uint64_t offset = j - ((uint64_t)1 << (q->base_shift + k));
    char *slab = slab_at(q, k);
    return (struct spindle_wfq_node *)(slab + offset * q->node_stride);
}

static inline void *payload_of(spindle_wfq *q, struct spindle_wfq_node *node) {
    return (char *)node + q->payload_offset;
}

static inline struct spindle_wfq_node *node_of(spindle_wfq *q, void *payload) {
    return (struct spindle_wfq_node *)((char *)payload - q->payload_offset);
}

// The consumer's payload_of: reads its own line's copy of the offset.
static inline void *consumer_payload_of(spindle_wfq *q, struct spindle_wfq_node *node) {
    return (char *)node + q->consumer_payload_offset;
}

// Another thread is a few instructions from done (a producer between its
// tail exchange and its link store; a thread holding the grow lock), unless
// it was preempted. Spin with growing pauses, then yield the CPU so that a
// preempted thread can run.
static void backoff(unsigned *attempt) {
    if (*attempt < 10) {
        for (unsigned i = 0; i < (1u << *attempt); i++) spindle_relax();
    } else {
        sched_yield();
    }
    (*attempt)++;
}

static void lock_grow(spindle_wfq *q) {
    unsigned attempt = 0;
    while (atomic_flag_test_and_set_explicit(&q->grow_lock, memory_order_acquire)) backoff(&attempt);
}

static void unlock_grow(spindle_wfq *q) {
    atomic_flag_clear_explicit(&q->grow_lock, memory_order_release);
}

static inline uint64_t pack_head(uint64_t old, uint32_t index_plus_one) {
    return (((old >> 32) + 1) << 32) | index_plus_one;
}

// Pushes the chain first..last (linked by free_next, last's link is set here).
static void push_chain(spindle_wfq *q, struct spindle_wfq_node *first,
                       struct spindle_wfq_node *last) {
    uint64_t head = atomic_load_explicit(&q->free_head, memory_order_relaxed);
    uint64_t desired;
    do {
        atomic_store_explicit(&last->free_next, (uint32_t)head, memory_order_relaxed);
        desired = pack_head(head, first->index + 1);
    } while (!atomic_compare_exchange_weak_explicit(
        &q->free_head, &head, desired, memory_order_release, memory_order_relaxed));
}

// Allocates the next slab; returns one node for the caller and pushes the
// rest. Returns NULL when memory or slab numbers are exhausted.
static struct spindle_wfq_node *grow(spindle_wfq *q) {
    lock_grow(q);
    // Another thread may have grown the pool while we waited for the lock.
    if ((uint32_t)atomic_load_explicit(&q->free_head, memory_order_acquire) != 0) {
        unlock_grow(q);
        return NULL;  // caller retries the free list
    }
    unsigned k = q->slab_count;
    uint64_t count = (uint64_t)1 << (q->base_shift + k);
    uint64_t first_index = (((uint64_t)1 << k) - 1) << q->base_shift;
    // Indices stay below 2^31: the top bit marks a queued marker (see Markers).
    if (k >= SPINDLE_WFQ_MAX_SLABS || first_index + count > 0x7FFFFFFFu) {
        unlock_grow(q);
        return (struct spindle_wfq_node *)-1;
    }
    _Atomic(char *) *more = atomic_load_explicit(&q->more_slabs, memory_order_relaxed);
    if (k >= SPINDLE_WFQ_INLINE_SLABS && more == NULL) {
        // Published before the slab whose address it will hold (release),
        // so any thread that finds a node of that slab finds the table.
        more = calloc(SPINDLE_WFQ_MAX_SLABS - SPINDLE_WFQ_INLINE_SLABS, sizeof(*more));
        if (more == NULL) {
            unlock_grow(q);
            return (struct spindle_wfq_node *)-1;
        }
        atomic_store_explicit(&q->more_slabs, more, memory_order_release);
    }
    char *slab = aligned_alloc(SPINDLE_CACHE_LINE, (size_t)count * q->node_stride);
    if (slab == NULL) {
        unlock_grow(q);
        return (struct spindle_wfq_node *)-1;
    }
    for (uint64_t i = 0; i < count; i++) {
        struct spindle_wfq_node *node = (struct spindle_wfq_node *)(slab + i * q->node_stride);
        node->index = (uint32_t)(first_index + i);
        uint32_t next = (i + 1 < count) ? (uint32_t)(first_index + i + 2) : 0;
        atomic_init(&node->free_next, next);
    }
    atomic_store_explicit(k < SPINDLE_WFQ_INLINE_SLABS ? &q->slabs[k] : &more[k - SPINDLE_WFQ_INLINE_SLABS],
                          slab, memory_order_release);
    q->slab_count = (uint8_t)(k + 1);
    atomic_fetch_add_explicit(&q->allocated_nodes, (uint32_t)count, memory_order_relaxed);
    struct spindle_wfq_node *mine = (struct spindle_wfq_node *)slab;
    if (count > 1) {
        struct spindle_wfq_node *first = (struct spindle_wfq_node *)(slab + q->node_stride);
        struct spindle_wfq_node *last = (struct spindle_wfq_node *)(slab + (count - 1) * q->node_stride);
        push_chain(q, first, last);
    }
    unlock_grow(q);
    return mine;
}

spindle_wfq *spindle_wfq_create(size_t payload_size, size_t payload_align, size_t nodes_per_slab) {
    if (payload_align == 0 || (payload_align & (payload_align - 1)) != 0 ||
        payload_align > SPINDLE_CACHE_LINE) {
        return NULL;
    }
    size_t payload_offset = spindle_round_up(sizeof(struct spindle_wfq_node), payload_align);
    // Natural stride, not a cache line per node: a padded node costs one
    // cache-line transfer per event between producer and consumer cores;
    // packed, several events share a line (the payload alignment is kept).
    size_t stride_align = payload_align > 16 ? payload_align : 16;
    size_t node_stride = spindle_round_up(payload_offset + payload_size, stride_align);
    if (node_stride > UINT32_MAX) return NULL;
    spindle_wfq *q = aligned_alloc(SPINDLE_CACHE_LINE, sizeof(*q));
    if (q == NULL) return NULL;
    memset(q, 0, sizeof(*q));
    __cds_wfcq_init(&q->head, &q->tail);
    __cds_wfcq_init(&q->batch_head, &q->batch_tail);
    q->payload_offset = (uint32_t)payload_offset;
    q->consumer_payload_offset = (uint32_t)payload_offset;
    q->node_stride = (uint32_t)node_stride;
    size_t base = spindle_next_pow2(nodes_per_slab < 8 ? 8 : nodes_per_slab);
    unsigned shift = log2_floor(base);
    q->base_shift = (uint8_t)(shift > 20 ? 20 : shift);
    atomic_init(&q->free_head, 0);
    atomic_init(&q->allocated_nodes, 0);
    for (unsigned k = 0; k < SPINDLE_WFQ_INLINE_SLABS; k++) atomic_init(&q->slabs[k], NULL);
    atomic_init(&q->more_slabs, NULL);
    atomic_flag_clear_explicit(&q->grow_lock, memory_order_relaxed);
    spindle_live_queues_add(1);
    return q;
}

void spindle_wfq_destroy(spindle_wfq *q) {
    if (q == NULL) return;
    for (unsigned k = 0; k < q->slab_count; k++) free(slab_at(q, k));
    free(atomic_load_explicit(&q->more_slabs, memory_order_relaxed));
    free(q);
    spindle_live_queues_add(-1);
}

void *spindle_wfq_acquire(spindle_wfq *q) {
    uint64_t head = atomic_load_explicit(&q->free_head, memory_order_acquire);
    for (;;) {
        uint32_t index_plus_one = (uint32_t)head;
        if (index_plus_one == 0) {
            struct spindle_wfq_node *fresh = grow(q);
            if (fresh == (struct spindle_wfq_node *)-1) return NULL;
            if (fresh != NULL) return payload_of(q, fresh);
            head = atomic_load_explicit(&q->free_head, memory_order_acquire);
            continue;
        }
        struct spindle_wfq_node *node = node_at(q, index_plus_one - 1);
        // May read a stale link if another thread pops this node first; the
        // tag makes the CAS fail in that case.
        uint32_t next = atomic_load_explicit(&node->free_next, memory_order_relaxed);
        if (atomic_compare_exchange_weak_explicit(&q->free_head, &head, pack_head(head, next),
                                                  memory_order_acquire, memory_order_acquire)) {
            // The next pop reads the new head's link, a line the consumer
            // wrote when it retired the node: start fetching it now (for
            // writing, since the producer fills it), so that miss overlaps
            // this event's work instead of stalling the next acquire.
            if (next != 0) __builtin_prefetch(node_at(q, next - 1), 1, 3);
            // And a guess further ahead: the free list gives nodes back in
            // the order they were consumed, which after warm-up is mostly
            // address order, so the node two cache lines on is likely to
            // be acquired soon. Following the list to find it would be a
            // dependent miss per node; the guess costs nothing when wrong
            // (a prefetch never faults). Commit 7b74905 gives the
            // measurement.
            __builtin_prefetch((char *)node + 2 * SPINDLE_CACHE_LINE, 1, 3);
            return payload_of(q, node);
        }
    }
}

size_t spindle_wfq_acquire_many(spindle_wfq *q, void **payloads, size_t count) {
    size_t taken = 0;
    while (taken < count) {
        uint64_t head = atomic_load_explicit(&q->free_head, memory_order_acquire);
        uint32_t first_plus_one = (uint32_t)head;
        if (first_plus_one == 0) {
            // The pool is empty: one node the usual way (it grows the pool).
            void *payload = spindle_wfq_acquire(q);
            if (payload == NULL) return taken;
            payloads[taken++] = payload;
            continue;
        }
        // Walk up to the nodes still wanted, then take them all with one
        // CAS. A node's link is only written while it is out of the list, and
        // the tag changes with every push and pop: if the CAS succeeds, no
        // node was taken or added since `head` was read, so the links walked
        // were the list's.
        size_t want = count - taken;
        size_t walked = 0;
        uint32_t next_plus_one = first_plus_one;
        while (walked < want && next_plus_one != 0) {
            struct spindle_wfq_node *node = node_at(q, next_plus_one - 1);
            payloads[taken + walked] = payload_of(q, node);
            walked++;
            next_plus_one = atomic_load_explicit(&node->free_next, memory_order_relaxed);
        }
        if (atomic_compare_exchange_weak_explicit(&q->free_head, &head, pack_head(head, next_plus_one),
                                                  memory_order_acquire, memory_order_acquire)) {
            taken += walked;
        }
    }
    return taken;
}

void spindle_wfq_release(spindle_wfq *q, void *payload) {
    struct spindle_wfq_node *node = node_of(q, payload);
    push_chain(q, node, node);
}

void spindle_wfq_enqueue(spindle_wfq *q, void *payload) {
    struct spindle_wfq_node *node = node_of(q, payload);
    cds_wfcq_node_init(&node->link);
    SPINDLE_TSAN_RELEASE(node);
    (void)cds_wfcq_enqueue(&q->head, &q->tail, &node->link);
}

// Links a spliced-in chain after the old tail: liburcu's own store (a
// volatile store, which is what CMM_STORE_SHARED is, after the tail
// exchange, as in ___cds_wfcq_append), and
// like every access liburcu makes, invisible to Thread Sanitizer. Visible,
// an atomic store here would be a release-store on the old tail node's
// address, which TSan keys that node's happens-before edge on
// (SPINDLE_TSAN_RELEASE/ACQUIRE): it would replace the edge from the node's
// own producer to the consumer with one from this producer, and TSan would
// then report the node's payload as a race.
__attribute__((noinline, no_sanitize("thread")))
static void link_after_tail(struct cds_wfcq_node *old_tail, struct cds_wfcq_node *first) {
    *(struct cds_wfcq_node *volatile *)&old_tail->next = first;
}

void spindle_wfq_enqueue_many(spindle_wfq *q, void *const *payloads, size_t count) {
    if (count == 0) return;
    // Link the chain privately, then append it as liburcu appends a spliced
    // queue (___cds_wfcq_append): exchange the tail for the chain's last
    // node, then link the old tail to its first. The consumer reads the
    // chain in order; the exchange is a full barrier, as in cds_wfcq_enqueue.
    // Each node is released to TSan after its last write (its link).
    struct spindle_wfq_node *first = node_of(q, payloads[0]);
    struct spindle_wfq_node *last = first;
    for (size_t i = 1; i < count; i++) {
        struct spindle_wfq_node *node = node_of(q, payloads[i]);
        last->link.next = &node->link;
        SPINDLE_TSAN_RELEASE(last);
        last = node;
    }
    last->link.next = NULL;
    SPINDLE_TSAN_RELEASE(last);
    struct cds_wfcq_node *old_tail = __atomic_exchange_n(&q->tail.p, &last->link, __ATOMIC_SEQ_CST);
    link_after_tail(old_tail, &first->link);
}

// Consumer only: the node `next` returned last stays in the batch until the
// following `next` retires it, so it does not count as unread.
static bool batch_has_unread(spindle_wfq *q) {
    if (cds_wfcq_empty(&q->batch_head, &q->batch_tail)) return false;
    return q->cursor == NULL || &q->cursor->link != q->batch_tail.p;
}

bool spindle_wfq_is_empty_consumer(spindle_wfq *q) {
    return cds_wfcq_empty(&q->head, &q->tail) && !batch_has_unread(q);
}

// The tail alone: it is the enqueuers' linearization point (an enqueue
// exchanges it before it links its node behind the head, and the consumer
// clears the head's link before it points the tail back at the head), so
// the queue is empty exactly when the tail points at the head.
// `cds_wfcq_empty` reads the head's link first, which loads the
// consumer's line as well: for a loop cold in the cache (a connection's,
// between two requests) a second miss per emit and per idle re-check.
bool spindle_wfq_looks_empty(spindle_wfq *q) {
    return __atomic_load_n(&q->tail.p, __ATOMIC_RELAXED) == &q->head.node;
}

size_t spindle_wfq_allocated_nodes(spindle_wfq *q) {
    return atomic_load_explicit(&q->allocated_nodes, memory_order_relaxed);
}

static void flush_released(spindle_wfq *q) {
    if (q->release_first != NULL) {
        push_chain(q, q->release_first, q->release_last);
        q->release_first = NULL;
        q->release_last = NULL;
        q->release_count = 0;
    }
}

static void retire_cursor(spindle_wfq *q, struct spindle_wfq_node *node) {
    // Chain through free_next: last's link is written by push_chain.
    if (q->release_first == NULL) {
        q->release_first = node;
    } else {
        atomic_store_explicit(&q->release_last->free_next, node->index + 1, memory_order_relaxed);
    }
    q->release_last = node;
    if (++q->release_count >= SPINDLE_WFQ_RELEASE_FLUSH) flush_released(q);
}

// The batch is fully read: retire its last node and reset the batch (its
// tail would otherwise point at a retired node). Retired nodes go back to
// the pool once there are enough of them to amortize the CAS.
static void exhaust_batch(spindle_wfq *q) {
    if (q->cursor != NULL) retire_cursor(q, q->cursor);
    __cds_wfcq_init(&q->batch_head, &q->batch_tail);
    q->cursor = NULL;
    if (q->release_count >= SPINDLE_WFQ_RELEASE_MIN_CHAIN) flush_released(q);
}

void spindle_wfq_flush_consumer(spindle_wfq *q) {
    flush_released(q);
}

bool spindle_wfq_splice_consumer(spindle_wfq *q) {
    if (q->cursor != NULL && &q->cursor->link == q->batch_tail.p) exhaust_batch(q);
    unsigned attempt = 0;
    for (;;) {
        enum cds_wfcq_ret ret = __cds_wfcq_splice_nonblocking(&q->batch_head, &q->batch_tail,
                                                              &q->head, &q->tail);
        if (ret != CDS_WFCQ_RET_WOULDBLOCK) break;
        backoff(&attempt);
    }
    return batch_has_unread(q);
}

void *spindle_wfq_next_consumer(spindle_wfq *q) {
    struct spindle_wfq_node *cursor = q->cursor;
    struct cds_wfcq_node *next;
    unsigned attempt = 0;
    for (;;) {
        next = (cursor == NULL)
            ? __cds_wfcq_first_nonblocking(&q->batch_head, &q->batch_tail)
            : __cds_wfcq_next_nonblocking(&q->batch_head, &q->batch_tail, &cursor->link);
        if (next != CDS_WFCQ_WOULDBLOCK) break;
        backoff(&attempt);
    }
    if (next == NULL) {
        exhaust_batch(q);
        return NULL;
    }
    if (cursor != NULL) retire_cursor(q, cursor);
    struct spindle_wfq_node *node = caa_container_of(next, struct spindle_wfq_node, link);
    SPINDLE_TSAN_ACQUIRE(node);
    q->cursor = node;
    return consumer_payload_of(q, node);
}

// MARK: Markers (per-producer lanes)

// A marker is a node whose `index` carries this bit while it is queued
// (indices stay below 2^31: 8 << 28 nodes at most), and whose payload holds
// the marker's pointer. Not free_next: another thread's free-list walk
// (spindle_wfq_acquire_many) may read a queued node's stale free_next and
// follow it before its CAS fails, so free_next must always hold a valid
// link. `index` is read only by the node's owner: the producer sets the bit
// before the enqueue (whose release publishes it), the consumer clears it
// when it takes the marker, before the node is retired.
#define SPINDLE_WFQ_MARKER_BIT 0x80000000u

bool spindle_wfq_enqueue_marker(spindle_wfq *q, void *marker) {
    void *payload = spindle_wfq_acquire(q);
    if (payload == NULL) return false;
    struct spindle_wfq_node *node = node_of(q, payload);
    memcpy(payload, &marker, sizeof marker);
    node->index |= SPINDLE_WFQ_MARKER_BIT;
    spindle_wfq_enqueue(q, payload);
    return true;
}

void *spindle_wfq_next_or_marker_consumer(spindle_wfq *q, void **marker) {
    void *payload = spindle_wfq_next_consumer(q);
    if (payload == NULL) return NULL;
    struct spindle_wfq_node *node = (struct spindle_wfq_node *)((char *)payload - q->consumer_payload_offset);
    if (__builtin_expect((node->index & SPINDLE_WFQ_MARKER_BIT) != 0, 0)) {
        node->index &= ~SPINDLE_WFQ_MARKER_BIT;
        memcpy(marker, payload, sizeof *marker);
        return NULL;
    }
    return payload;
}
