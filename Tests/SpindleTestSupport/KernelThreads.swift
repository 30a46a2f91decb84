import Foundation

// One thread's own facts, read from Linux's /proc: whether a given thread
// still runs, and whether it is asleep in the kernel. Tests use them instead
// of process-wide thread counts, which other suites move.

/// Whether this system has the /proc files the functions below read
/// (Linux); elsewhere the tests skip the checks built on them.
package let kernelThreadFactsAvailable = FileManager.default.fileExists(atPath: "/proc/thread-self")

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

/// Whether the kernel gives a `SCHED_OTHER` thread the time slice it asks
/// for (`sched_setattr`'s `sched_runtime`): Linux 6.12 and later, read from
/// /proc/sys/kernel/osrelease ("6.18.44-…"). False elsewhere.
package let kernelHasCustomSlices: Bool = {
    guard let release = try? String(contentsOfFile: "/proc/sys/kernel/osrelease", encoding: .utf8) else {
        return false
    }
    let numbers = release.split(whereSeparator: { !$0.isNumber }).prefix(2).compactMap { Int($0) }
    guard numbers.count == 2 else { return false }
    return (numbers[0], numbers[1]) >= (6, 12)
}()
