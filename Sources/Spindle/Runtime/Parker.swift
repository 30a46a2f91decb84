import CSpindle

/// A Swift handle on the C event count (`spindle_parker`): a thread spins
/// briefly on its condition, then sleeps on a futex until notified.
///
/// Thread safety: every method may be called from any thread; see the C
/// header for the prepare / re-check / wait protocol.
final class Parker: Sendable {
    // The C parker synchronizes itself (C11 atomics + futex); the pointer is
    // immutable and freed only in deinit, so sharing it is safe.
    nonisolated(unsafe) private let raw: OpaquePointer

    init() {
        guard let raw = spindle_parker_create() else { fatalError("Spindle: out of memory creating a parker") }
        self.raw = raw
    }

    deinit { spindle_parker_destroy(raw) }

    /// Spins up to `spins` times while `condition` is false, then sleeps until
    /// notified or `timeoutNanoseconds` pass (0 = no timeout). Returns as soon
    /// as `condition` holds; may also return on a timeout or a spurious wake.
    @inline(__always)
    func wait(spins: Int, timeoutNanoseconds: UInt64 = 0, until condition: () -> Bool) {
        var spun = 0
        while spun < spins {
            if condition() { return }
            spindle_cpu_relax()
            spun += 1
        }
        let key = spindle_parker_prepare(raw)
        if condition() {
            spindle_parker_cancel(raw)
            return
        }
        spindle_parker_wait(raw, key, timeoutNanoseconds)
    }

    /// Wakes the sleepers, if any. One fence and one load when nobody sleeps.
    @inline(__always)
    func notify() { spindle_parker_notify(raw) }

    /// `notify()` for a caller that has just done a sequentially consistent
    /// read-modify-write after making the condition true: one load when
    /// nobody sleeps (see `spindle_parker_notify_after_rmw`).
    @inline(__always)
    func notifyAfterRMW() { spindle_parker_notify_after_rmw(raw) }
}
