import Dispatch
import Foundation

/// The default bound of the `eventually` helpers: a hang guard, not a
/// speed check. A condition normally holds within milliseconds, but the
/// whole package runs every suite at once on as few as two cores, under
/// Thread Sanitizer and beside other work (scripts/parallel.sh), where an
/// async test can be starved of the two cooperative threads for tens of
/// seconds by the C target's tests, whose consumers run on the test's own
/// thread; the bound only delays the report of a real hang. Beside two CPU
/// hogs under TSan, waits that take milliseconds alone took over 120 s: the
/// bound is 10 minutes (parallel.sh bounds a whole run at 30).
package let hangGuardSeconds: Double = 600

/// `hangGuardSeconds` as a duration, for the C target's consumer loops.
package let hangGuard: Duration = .seconds(Int(hangGuardSeconds))

/// Polls `condition` every millisecond until it holds or `seconds` pass.
/// - Returns: whether it held.
package func eventually(within seconds: Double = hangGuardSeconds, _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(1))
    }
    return condition()
}

/// Polls `value` every millisecond until it gives a value or `seconds` pass.
/// - Returns: the value, or nil if none came.
package func eventuallyValue<T>(within seconds: Double = hangGuardSeconds, _ value: () -> T?) async -> T? {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    while ContinuousClock.now < deadline {
        if let found = value() { return found }
        try? await Task.sleep(for: .milliseconds(1))
    }
    return value()
}

/// `eventually` on the main actor, for conditions that read main-actor
/// state: polls `condition` there every millisecond until it holds or
/// `seconds` pass.
/// - Returns: whether it held.
@MainActor
package func eventuallyOnMainActor(within seconds: Double = hangGuardSeconds, _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(1))
    }
    return condition()
}

/// Runs `body` on `count` OS threads (Foundation `Thread`, never the
/// cooperative pool: producers block, and the pool has one thread per core)
/// and waits for all of them without blocking a concurrency thread.
/// - Returns: false if they were not all done within `seconds` (a hang: the
///   caller records it; the threads are left running).
@discardableResult
package func onThreads(_ count: Int, within seconds: Double = 600, _ body: @escaping @Sendable (Int) -> Void) async -> Bool {
    let remaining = Counter()
    remaining.add(count)
    let done = Locked<CheckedContinuation<Bool, Never>?>(nil)
    let finished: @Sendable (Bool) -> Void = { value in
        if let continuation = done.withLock({ stored -> CheckedContinuation<Bool, Never>? in
            defer { stored = nil }
            return stored
        }) {
            continuation.resume(returning: value)
        }
    }
    return await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
        done.withLock { $0 = continuation }
        for index in 0..<count {
            let thread = Thread {
                body(index)
                if remaining.add(-1) == 0 { finished(true) }
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { finished(false) }
    }
}
