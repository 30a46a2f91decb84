#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Nanoseconds on the monotonic clock (`CLOCK_MONOTONIC`, a vDSO call on
/// Linux: about 20 ns). The one clock every scenario uses, for regions and
/// for latency stamps alike, so stamps taken on different threads compare.
enum MonotonicClock {
    @inline(__always)
    static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }

    /// Sleeps the calling thread until `deadline` on the same clock
    /// (`clock_nanosleep` with `TIMER_ABSTIME`: a schedule of absolute
    /// deadlines does not drift, and the thread burns no CPU while it waits).
    static func sleep(until deadline: UInt64) {
        var time = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &time, nil) == EINTR {}
    }
}
