import Spindle

/// Something that can run its effects until nothing more happens without the
/// test: a ``TestSpin`` or a ``TestFeedback``. A ``TestClock`` drives the
/// runners whose runs sleep on it after each wake-up.
protocol VirtualTimeDriver: AnyObject, Sendable {
    /// Runs queued jobs (and, for a spin, reduces emitted events) until idle.
    func drive()
}

/// Marks one effect run while it waits on something the test controls.
///
/// The runner gives every run's task a tag (a task-local value, so the
/// run's structured child tasks see it too). A ``TestClock`` sleep and a
/// stream feedback waiting for its next state *park* the tag while they
/// wait. A run whose tag is parked is waiting for the test (to advance the
/// clock, or to send an event); a run in flight whose tag is not parked is
/// waiting on something else — real I/O, a real timer, another thread — and
/// keeps the runner from reporting ``Settlement/settled``.
///
/// **Thread safety:** any thread; the count is behind a lock.
final class RunTag: Sendable {
    /// The tag of the run the current task belongs to (nil outside a runner).
    @TaskLocal static var current: RunTag?

    // protected by lock: how many waits of this run are parked right now.
    private let parkedCount = Lock(0)
    // protected by lock: the runner to drive after a virtual-time wake-up.
    private let driverRef: Lock<WeakDriver>

    init(driver: (any VirtualTimeDriver)?) {
        driverRef = Lock(WeakDriver(value: driver))
    }

    /// The runner this run belongs to, while it is alive.
    var driver: (any VirtualTimeDriver)? { driverRef.withLock { $0.value } }

    /// True while at least one wait of the run is parked.
    var isParked: Bool { parkedCount.withLock { $0 > 0 } }

    /// Counts the current run as waiting for the test (`true`) until the
    /// matching call with `false`: a stream run waiting for its next state.
    static func setWaitingForTest(_ waiting: Bool) {
        current?.parkedCount.withLock { $0 += waiting ? 1 : -1 }
    }

    /// Runs `body` with the run counted as waiting for the test.
    static func parking<T>(_ body: () async throws -> T) async rethrows -> T {
        let tag = current
        tag?.parkedCount.withLock { $0 += 1 }
        defer { tag?.parkedCount.withLock { $0 -= 1 } }
        return try await body()
    }
}

/// A weak reference to a runner.
struct WeakDriver: Sendable {
    weak var value: (any VirtualTimeDriver)?
}
