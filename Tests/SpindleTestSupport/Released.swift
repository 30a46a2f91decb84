import Foundation

// Per-object teardown facts. Spindle's live-object counters are
// process-wide, and the suites of one test process run in parallel, so a
// unit test that compares them with a baseline can be moved by another
// test's loops (a leak hidden by someone else's loop ending, or a failure
// while someone else's loop runs). These facts belong to one test alone.

/// Calls `onDeinit` when it is deinitialized: captured by a loop's reducer,
/// feedback or effect handler, it tells when the loop lets go of that
/// closure.
package final class Probe: Sendable {
    private let onDeinit: @Sendable () -> Void
    package init(onDeinit: @escaping @Sendable () -> Void) { self.onDeinit = onDeinit }
    deinit { onDeinit() }
}

/// Probes handed out to the parts of the loops under test, and whether
/// every one of them has been let go.
package final class ReleaseProbes: Sendable {
    private let outstanding = Counter()

    package init() {}

    /// A probe to capture in a closure the loop holds.
    package func probe() -> Probe {
        outstanding.add()
        return Probe { [outstanding] in outstanding.add(-1) }
    }

    /// Probes made and not yet deinitialized.
    package var live: Int { outstanding.current }
}

/// The kernel's id of the calling thread (Linux: from /proc/thread-self),
/// or nil where there is none to read.
package func currentKernelThreadID() -> Int? {
    // "/proc/thread-self" links to "<pid>/task/<tid>".
    guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self") else {
        return nil
    }
    return target.split(separator: "/").last.flatMap { Int($0) }
}

/// Whether the thread with kernel id `id` still runs in this process
/// (an entry of /proc/self/task).
package func kernelThreadIsAlive(_ id: Int) -> Bool {
    FileManager.default.fileExists(atPath: "/proc/self/task/\(id)")
}

/// Whether the thread with kernel id `id` is asleep in the kernel (state
/// "S" in /proc/self/task/<id>/stat: waiting on a futex, a lock or a
/// timer), as opposed to running or runnable. False where /proc is absent.
package func kernelThreadIsAsleep(_ id: Int) -> Bool {
    guard let stat = try? String(contentsOfFile: "/proc/self/task/\(id)/stat", encoding: .utf8),
          let endOfName = stat.lastIndex(of: ")") else { return false }
    // "<tid> (<name>) <state> …": the name may hold spaces and parentheses.
    return stat[stat.index(after: endOfName)...].split(separator: " ").first == "S"
}
