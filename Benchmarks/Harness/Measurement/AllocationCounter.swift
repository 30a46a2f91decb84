import CMallocCounter

/// Allocator calls made by the whole process (every thread) in a region.
struct AllocationCount: Sendable, Hashable {
    /// malloc, calloc, posix_memalign, aligned_alloc, memalign, valloc,
    /// pvalloc, realloc(NULL, …).
    var allocations: Int
    /// realloc of an existing block (it may move, so it counts as an
    /// allocation in the per-event figure).
    var reallocations: Int
    /// free of a non-NULL pointer.
    var frees: Int

    /// What "allocations per event" counts: calls that may allocate.
    var allocatingCalls: Int { allocations + reallocations }
}

/// Counts allocator calls around a measured region, through the
/// `CMallocCounter` C target (glibc only; see its header for the method).
///
/// Thread safety: `start` and `stop` from the thread that runs the scenario;
/// the counting itself happens on every thread of the process.
enum AllocationCounter {
    /// True when the platform's allocator is interposed (glibc).
    static let isSupported = bench_malloc_counter_is_supported() != 0

    /// Zeroes the counts and starts counting.
    static func start() {
        bench_malloc_counter_enable()
    }

    /// Stops counting. Returns nil where counting is unsupported.
    static func stop() -> AllocationCount? {
        let counts = bench_malloc_counter_disable()
        guard isSupported else { return nil }
        return AllocationCount(
            allocations: Int(counts.allocations),
            reallocations: Int(counts.reallocations),
            frees: Int(counts.frees))
    }
}
