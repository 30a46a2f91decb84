import Spindle

/// A clock whose time moves only when the test advances it.
///
/// Give it to your effects by capture (dependency injection), and a test
/// drives their waits without sleeping:
///
/// @Snippet(path: "Spindle/Snippets/SpindleTesting/TestingDeterministicRunner", slice: "searchSpin")
///
/// A test passes a `TestClock` and moves it past the debounce:
///
/// @Snippet(path: "Spindle/Snippets/SpindleTesting/TestingDeterministicRunner", slice: "debounceTest")
///
/// ``sleep(until:tolerance:)`` suspends until ``advance(by:)`` (or
/// ``advance(to:)``) moves ``now`` to or past its deadline. Advancing wakes
/// the due sleepers one at a time, in deadline order (sleepers with the same
/// deadline in the order they started sleeping); ``now`` is set to each
/// sleeper's deadline as it wakes, and before the next one wakes the clock
/// lets every ``TestSpin`` or ``TestFeedback`` whose runs sleep on it run
/// until idle. So an effect woken at 1 s that sleeps again for 1 s wakes
/// again within the same `advance(by: .seconds(5))`, at 2 s, and so on. Then
/// ``now`` is set to the target.
///
/// > Important: A sleeping task that is cancelled (a
/// > `ExecutionStrategy.cancelOnNewState` run overtaken by a new
/// > state, or a stopped runner) wakes at once and `sleep` throws
/// > `CancellationError`, as `Task.sleep` does. A sleep whose deadline is
/// > not after ``now`` returns at once.
///
/// Outside a runner the clock works too (sleepers are resumed on whatever
/// executor their task uses), but then nothing runs until idle between two
/// wake-ups.
///
/// **Thread safety:** any method, any thread. Advance it from the test,
/// not from an effect.
public final class TestClock: Clock, Sendable {
    /// A point on the test clock's timeline: the time since its start.
    public struct Instant: InstantProtocol, Sendable, Hashable, CustomStringConvertible {
        /// The time since the clock's zero.
        public let offset: Swift.Duration

        /// Creates the instant `offset` after the clock's zero.
        public init(offset: Swift.Duration) {
            self.offset = offset
        }

        public func advanced(by duration: Swift.Duration) -> Instant {
            Instant(offset: offset + duration)
        }

        public func duration(to other: Instant) -> Swift.Duration {
            other.offset - offset
        }

        public static func < (lhs: Instant, rhs: Instant) -> Bool {
            lhs.offset < rhs.offset
        }

        public var description: String { "TestClock.Instant(\(offset))" }
    }

    public typealias Duration = Swift.Duration

    private enum Sleeper: Sendable {
        /// Registered, its continuation not yet stored.
        case armed(deadline: Instant)
        case waiting(deadline: Instant, CheckedContinuation<Void, any Error>)
        /// Cancelled or due before its continuation was stored.
        case cancelled
        case fired
    }

    private struct Timeline: Sendable {
        var now: Instant
        var nextID: UInt64 = 0
        var sleepers: [UInt64: Sleeper] = [:]
        var drivers: [ObjectIdentifier: WeakDriver] = [:]
    }

    // protected by lock: the time, the sleepers and the runners to drive.
    private let timeline: Lock<Timeline>

    /// Creates a clock at `now` (the clock's zero by default).
    public init(now: Instant = Instant(offset: .zero)) {
        timeline = Lock(Timeline(now: now))
    }

    /// The current time on this clock.
    public var now: Instant { timeline.withLock { $0.now } }

    /// Zero: the clock has no granularity.
    public var minimumResolution: Duration { .zero }

    /// How many sleeps are waiting for the clock.
    public var sleeperCount: Int {
        timeline.withLock { $0.sleepers.values.count { if case .waiting = $0 { true } else { false } } }
    }

    /// The earliest deadline of a waiting sleep, if any.
    public var nextDeadline: Instant? {
        timeline.withLock { timeline in
            timeline.sleepers.values.compactMap { sleeper -> Instant? in
                if case .waiting(let deadline, _) = sleeper { deadline } else { nil }
            }.min()
        }
    }

    /// Suspends until the clock is advanced to `deadline` or past it.
    /// - Throws: `CancellationError` when the task is cancelled, before or
    ///   while it sleeps.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try Task.checkCancellation()
        let tag = RunTag.current
        let id = timeline.withLock { timeline -> UInt64? in
            guard deadline > timeline.now else { return nil }
            let id = timeline.nextID
            timeline.nextID += 1
            timeline.sleepers[id] = .armed(deadline: deadline)
            if let driver = tag?.driver { timeline.drivers[ObjectIdentifier(driver)] = WeakDriver(value: driver) }
            return id
        }
        guard let id else { return }
        try await RunTag.parking {
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    let early = timeline.withLock { timeline -> Sleeper? in
                        guard case .armed(let deadline) = timeline.sleepers[id] else {
                            return timeline.sleepers.removeValue(forKey: id)
                        }
                        timeline.sleepers[id] = .waiting(deadline: deadline, continuation)
                        return nil
                    }
                    switch early {
                    case .cancelled: continuation.resume(throwing: CancellationError())
                    case .fired: continuation.resume()
                    default: break
                    }
                }
            } onCancel: {
                let waiting = timeline.withLock { timeline -> CheckedContinuation<Void, any Error>? in
                    switch timeline.sleepers[id] {
                    case .armed:
                        timeline.sleepers[id] = .cancelled
                        return nil
                    case .waiting(_, let continuation):
                        timeline.sleepers[id] = nil
                        return continuation
                    default:
                        return nil
                    }
                }
                waiting?.resume(throwing: CancellationError())
            }
        }
    }

    /// Moves the clock forward by `duration`, waking the sleepers that fall
    /// due in deadline order (see ``TestClock``).
    /// - Precondition: `duration` is not negative.
    public func advance(by duration: Duration) {
        precondition(duration >= .zero, "SpindleTesting: TestClock cannot go back (advance by \(duration))")
        advance(to: now.advanced(by: duration))
    }

    /// Moves the clock forward to `instant`, waking the sleepers that fall
    /// due in deadline order, and letting the runners whose runs sleep on
    /// this clock run until idle after each wake-up.
    /// - Precondition: `instant` is not before ``now``.
    public func advance(to instant: Instant) {
        precondition(instant >= now, "SpindleTesting: TestClock cannot go back (from \(now) to \(instant))")
        while let (continuation, drivers) = wakeNext(until: instant) {
            continuation?.resume()
            for driver in drivers { driver.drive() }
        }
        let drivers = timeline.withLock { timeline in
            timeline.now = max(timeline.now, instant)
            return timeline.drivers.values.compactMap(\.value)
        }
        for driver in drivers { driver.drive() }
    }

    /// Moves time to the earliest sleeper due by `limit` and takes it out.
    /// - Returns: nil when none is due; else its continuation (nil if it had
    ///   none stored yet: it was marked fired) and the runners to drive.
    private func wakeNext(
        until limit: Instant
    ) -> (CheckedContinuation<Void, any Error>?, [any VirtualTimeDriver])? {
        timeline.withLock { timeline in
            var earliest: (id: UInt64, deadline: Instant)?
            for (id, sleeper) in timeline.sleepers {
                let deadline: Instant
                switch sleeper {
                case .armed(let due), .waiting(let due, _): deadline = due
                case .cancelled, .fired: continue
                }
                guard deadline <= limit else { continue }
                if let best = earliest, (best.deadline, best.id) < (deadline, id) { continue }
                earliest = (id, deadline)
            }
            guard let earliest else { return nil }
            timeline.now = max(timeline.now, earliest.deadline)
            var continuation: CheckedContinuation<Void, any Error>?
            if case .waiting(_, let waiting) = timeline.sleepers[earliest.id] {
                continuation = waiting
                timeline.sleepers[earliest.id] = nil
            } else {
                timeline.sleepers[earliest.id] = .fired
            }
            timeline.drivers = timeline.drivers.filter { $0.value.value != nil }
            return (continuation, timeline.drivers.values.compactMap(\.value))
        }
    }
}
