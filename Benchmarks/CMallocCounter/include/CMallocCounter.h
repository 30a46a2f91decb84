// CMallocCounter: counts the process's allocator calls while enabled, for
// the benchmark harness's "allocations per event" figure.
//
// Why it exists: the allocation count is the benchmark's most stable figure
// (swift-nio gates its CI on it), and Swift offers no hook into malloc. On
// glibc this target defines malloc, calloc, realloc, free, posix_memalign,
// aligned_alloc, memalign, valloc and pvalloc; the executable's definitions
// interpose libc's for every library in the process (the Swift runtime,
// Foundation, Dispatch, liburcu), and each forwards to glibc's own
// __libc_* entry point. Elsewhere nothing is interposed and
// bench_malloc_counter_is_supported() returns 0.
//
// Counting is off by default; when off, each call costs one relaxed load.
// When on, each call is one relaxed C11 atomic add on a shared counter.
#ifndef CMALLOC_COUNTER_H
#define CMALLOC_COUNTER_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Counts taken between enable and disable. All fields are totals over every
/// thread of the process.
typedef struct {
    /// Calls that allocate: malloc, calloc, posix_memalign, aligned_alloc,
    /// memalign, valloc, pvalloc, and realloc with a NULL pointer.
    uint64_t allocations;
    /// realloc calls on an existing block (may move it).
    uint64_t reallocations;
    /// free calls on a non-NULL pointer.
    uint64_t frees;
} bench_malloc_counts;

/// 1 when allocator calls are interposed and counted (glibc), 0 otherwise.
/// Any thread.
int bench_malloc_counter_is_supported(void);

/// Zeroes the counters, then turns counting on. Any thread; the harness calls
/// it once, just before a measured region starts. Calls made concurrently by
/// other threads are counted from this point on (relaxed: a call racing with
/// enable may or may not be counted).
void bench_malloc_counter_enable(void);

/// Turns counting off and returns the counts since the last enable. Any
/// thread; calls racing with it may or may not be counted.
bench_malloc_counts bench_malloc_counter_disable(void);

/// Returns free heap memory to the kernel (glibc malloc_trim(0)), so that the
/// next peak-RSS reading starts from the live heap. No-op elsewhere.
void bench_malloc_trim(void);

/// Bytes the allocator has handed out and not yet had back, over every
/// arena (glibc mallinfo2: in-use chunks plus mmapped blocks); -1
/// elsewhere. Unlike the resident set it does not keep a peak's pages
/// (freed chunks inside an arena stay resident): a leak raises it, a
/// backlog that drains does not. Walks every arena under its lock: for
/// sampling, not a hot path. Any thread.
int64_t bench_malloc_in_use_bytes(void);

#ifdef __cplusplus
}
#endif

#endif
