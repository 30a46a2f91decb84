import CMallocCounter
import Foundation

/// Peak resident set size of the process, per measured run (Linux only).
///
/// Method: before each run the harness returns free heap pages to the kernel
/// (`malloc_trim(0)`), then writes "5" to `/proc/self/clear_refs`, which
/// resets the kernel's high-water mark `VmHWM` to the current RSS; after the
/// run it reads `VmHWM` from `/proc/self/status`. The figure is the whole
/// process's peak during the run — it includes the harness's own resident
/// memory (a few MiB: Swift runtime, Foundation, the histograms), not only
/// the loop's.
enum PeakMemory {
    /// Resets the high-water mark. Returns false when unsupported.
    @discardableResult
    static func reset() -> Bool {
        bench_malloc_trim()
        guard let handle = FileHandle(forWritingAtPath: "/proc/self/clear_refs") else { return false }
        defer { try? handle.close() }
        do {
            try handle.write(contentsOf: Data("5".utf8))
            return true
        } catch {
            return false
        }
    }

    /// The process's peak RSS since the last reset, in bytes (nil when
    /// unsupported).
    static func highWaterMark() -> Int? {
        statusField("VmHWM:")
    }

    /// The process's current RSS, in bytes (nil when unsupported).
    static func resident() -> Int? {
        statusField("VmRSS:")
    }

    // A "Name:   1234 kB" line of /proc/self/status, in bytes.
    private static func statusField(_ name: String) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix(name) {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 2, let kibibytes = Int(fields[1]) else { return nil }
            return kibibytes * 1024
        }
        return nil
    }
}

extension PeakMemory {
    /// Bytes the allocator has handed out and not had back, every arena
    /// (glibc `mallinfo2`; nil elsewhere). Unlike the RSS it falls when
    /// memory is freed, so a leak shows in it and a past peak does not.
    /// Walks every arena under its lock: for a before/after reading, not a
    /// hot path.
    static func heapInUse() -> Int? {
        let bytes = bench_malloc_in_use_bytes()
        return bytes >= 0 ? Int(bytes) : nil
    }
}
