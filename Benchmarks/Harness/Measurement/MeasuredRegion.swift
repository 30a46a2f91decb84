/// The measured region of one repetition: the clock and the allocation
/// counter, started together just before the first event is emitted (or the
/// start gate opens) and stopped together when the work is done.
///
/// Scenarios create loops, threads and queues *before* `begin()` and tear
/// them down *after* `end()`, so neither start-up nor teardown is timed or
/// counted unless a scenario says otherwise.
struct MeasuredRegion: ~Copyable {
    private let start: UInt64

    private init(start: UInt64) {
        self.start = start
    }

    /// Starts counting allocations, then starts the clock.
    static func begin() -> MeasuredRegion {
        AllocationCounter.start()
        return MeasuredRegion(start: MonotonicClock.now())
    }

    /// Stops the clock, then the allocation counter.
    consuming func end() -> (elapsedNanoseconds: UInt64, allocations: AllocationCount?) {
        let elapsed = MonotonicClock.now() - start
        return (elapsed, AllocationCounter.stop())
    }
}
