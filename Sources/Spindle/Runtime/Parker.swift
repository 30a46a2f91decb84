internal import CSpindle

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
    /// `beforeSleep` runs once, when the spinning is over and the thread is
    /// about to sleep (before its last check of `condition`).
    @inline(__always)
    func wait(
        spins: Int, timeoutNanoseconds: UInt64 = 0,
        beforeSleep: () -> Void = {}, until condition: () -> Bool
    ) {
        // Exponential backoff between checks (1, 2, 4, 8 pauses; ~17 ns each): checking
        // reads lines that producers write (a queue's tail), and every read
        // steals the line back from them; polling less often lets a producer
        // run at full speed while the sleeper stays ~150 ns away.
        var spun = 0
        var gap = 1
        while spun < spins {
            if condition() { return }
            for _ in 0..<gap { spindle_cpu_relax() }
            spun += gap
            if gap < 8 { gap <<= 1 }
        }
        beforeSleep()
        parkOnce(raw, timeoutNanoseconds: timeoutNanoseconds, until: condition)
    }

    /// Wakes the sleepers, if any. One fence and one load when nobody sleeps.
    @inline(__always)
    func notify() { spindle_parker_notify(raw) }

    /// True when a thread is registered to sleep (see
    /// `spindle_parker_has_waiters`). Any thread.
    @inline(__always)
    var hasWaiters: Bool { spindle_parker_has_waiters(raw) }

    /// `notify()` for a caller that has just done a sequentially consistent
    /// read-modify-write after making the condition true: one load when
    /// nobody sleeps (see `spindle_parker_notify_after_rmw`).
    @inline(__always)
    func notifyAfterRMW() { spindle_parker_notify_after_rmw(raw) }
}

/// One sleep on the C parker `raw`, by its protocol: register, re-check
/// `condition` (return if it holds), sleep until notified or
/// `timeoutNanoseconds` pass (0: no timeout). May return spuriously.
@inline(__always)
func parkOnce(_ raw: OpaquePointer, timeoutNanoseconds: UInt64, until condition: () -> Bool) {
    let key = spindle_parker_prepare(raw)
    if condition() {
        spindle_parker_cancel(raw, key)
        return
    }
    spindle_parker_wait(raw, key, timeoutNanoseconds)
}
