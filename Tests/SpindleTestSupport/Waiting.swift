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
    return heldOrReported(condition(), after: seconds)
}

/// Polls `value` every millisecond until it gives a value or `seconds` pass.
/// - Returns: the value, or nil if none came.
package func eventuallyValue<T>(within seconds: Double = hangGuardSeconds, _ value: () -> T?) async -> T? {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    while ContinuousClock.now < deadline {
        if let found = value() { return found }
        try? await Task.sleep(for: .milliseconds(1))
    }
    let found = value()
    _ = heldOrReported(found != nil, after: seconds)
    return found
}

/// `held`; a wait that ran out the hang guard (not a shorter bound a
/// caller chose) is reported as a hang first.
private func heldOrReported(_ held: Bool, after seconds: Double) -> Bool {
    if !held, seconds >= hangGuardSeconds { reportHang("a wait did not end after \(Int(seconds)) s") }
    return held
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
    return heldOrReported(condition(), after: seconds)
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
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) {
            guard remaining.current > 0 else { return }
            finished(false)
            reportHang("\(remaining.current) of \(count) threads still running after \(Int(seconds)) s")
        }
    }
}

/// Tells stderr what a hang left behind: whether the main queue and the
/// main actor still run work (a loop on the main actor needs both), and,
/// with `SPINDLE_HANG_STACKS` naming a directory and gdb installed, every
/// thread's stack in a file there (scripts/parallel.sh sets it). Runs on a
/// thread of its own; the process is not stopped, beyond gdb's attach.
package func reportHang(_ what: String) {
    let thread = Thread {
        let mainQueue = Counter()
        let mainActor = Counter()
        DispatchQueue.main.async { mainQueue.add() }
        Task { @MainActor in mainActor.add() }
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline, mainQueue.current == 0 || mainActor.current == 0 {
            Thread.sleep(forTimeInterval: 0.01)
        }
        var report = "SPINDLE-HANG \(what); within 30 s the main queue ran a probe: \(mainQueue.current > 0), "
            + "the main actor ran one: \(mainActor.current > 0)"
        if let directory = ProcessInfo.processInfo.environment["SPINDLE_HANG_STACKS"],
           FileManager.default.isExecutableFile(atPath: "/usr/bin/gdb") {
            let file = "\(directory)/hang-\(getpid())-\(UInt64(Date().timeIntervalSince1970 * 1000)).txt"
            let gdb = Process()
            gdb.executableURL = URL(fileURLWithPath: "/usr/bin/gdb")
            gdb.arguments = ["-p", "\(getpid())", "-batch", "-ex", "thread apply all bt 40"]
            _ = FileManager.default.createFile(atPath: file, contents: nil)
            gdb.standardOutput = FileHandle(forWritingAtPath: file)
            gdb.standardError = FileHandle.nullDevice
            if (try? gdb.run()) != nil {
                gdb.waitUntilExit()
                report += "; stacks in \(file)"
            }
        }
        FileHandle.standardError.write(Data((report + "\n").utf8))
    }
    thread.start()
}
