// See CMallocCounter.h for what this is and why.
#include "CMallocCounter.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

// <stdint.h> (through the header) has pulled in <features.h> on glibc, which
// defines __GLIBC__.
#if defined(__GLIBC__)
#include <errno.h>
#include <malloc.h>
#define BENCH_INTERPOSE 1
#else
#define BENCH_INTERPOSE 0
#endif

// Each counter on its own cache line: producers and the reducer thread hit
// them concurrently while counting is on.
typedef struct {
    _Alignas(64) atomic_uint_fast64_t value;
    char padding[64 - sizeof(atomic_uint_fast64_t)];
} padded_counter;
_Static_assert(sizeof(padded_counter) == 64, "one counter per cache line");

static atomic_bool counting = false;
static padded_counter allocations;
static padded_counter reallocations;
static padded_counter frees;

static inline void count(padded_counter *counter) {
    if (atomic_load_explicit(&counting, memory_order_relaxed)) {
        atomic_fetch_add_explicit(&counter->value, 1, memory_order_relaxed);
    }
}

void bench_malloc_counter_enable(void) {
    atomic_store_explicit(&allocations.value, 0, memory_order_relaxed);
    atomic_store_explicit(&reallocations.value, 0, memory_order_relaxed);
    atomic_store_explicit(&frees.value, 0, memory_order_relaxed);
    atomic_store_explicit(&counting, true, memory_order_seq_cst);
}

bench_malloc_counts bench_malloc_counter_disable(void) {
    atomic_store_explicit(&counting, false, memory_order_seq_cst);
    bench_malloc_counts counts = {
        .allocations = atomic_load_explicit(&allocations.value, memory_order_relaxed),
        .reallocations = atomic_load_explicit(&reallocations.value, memory_order_relaxed),
        .frees = atomic_load_explicit(&frees.value, memory_order_relaxed),
    };
    return counts;
}

#if BENCH_INTERPOSE

// glibc's real allocator, exported under these names for exactly this use
// (interposers that forward without dlsym, which itself may allocate).
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void __libc_free(void *pointer);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void *__libc_valloc(size_t size);
extern void *__libc_pvalloc(size_t size);

int bench_malloc_counter_is_supported(void) { return 1; }

void bench_malloc_trim(void) { malloc_trim(0); }

int64_t bench_malloc_in_use_bytes(void) {
#if __GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33)
    struct mallinfo2 info = mallinfo2();
    return (int64_t)(info.uordblks + info.hblkhd);
#else
    return -1;  // mallinfo2 came with glibc 2.33; mallinfo's ints wrap at 2 GiB
#endif
}

void *malloc(size_t size) {
    count(&allocations);
    return __libc_malloc(size);
}

void *calloc(size_t count_, size_t size) {
    count(&allocations);
    return __libc_calloc(count_, size);
}

void *realloc(void *pointer, size_t size) {
    count(pointer == NULL ? &allocations : &reallocations);
    return __libc_realloc(pointer, size);
}

void free(void *pointer) {
    if (pointer != NULL) count(&frees);
    __libc_free(pointer);
}

void *memalign(size_t alignment, size_t size) {
    count(&allocations);
    return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    count(&allocations);
    return __libc_memalign(alignment, size);
}

int posix_memalign(void **result, size_t alignment, size_t size) {
    // Same validation as glibc: a power of two, a multiple of sizeof(void *).
    if (alignment % sizeof(void *) != 0 || (alignment & (alignment - 1)) != 0 || alignment == 0) {
        return EINVAL;
    }
    count(&allocations);
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL && size != 0) return ENOMEM;
    *result = pointer;
    return 0;
}

void *valloc(size_t size) {
    count(&allocations);
    return __libc_valloc(size);
}

void *pvalloc(size_t size) {
    count(&allocations);
    return __libc_pvalloc(size);
}

#else

int bench_malloc_counter_is_supported(void) { return 0; }

void bench_malloc_trim(void) {}

int64_t bench_malloc_in_use_bytes(void) { return -1; }

#endif
