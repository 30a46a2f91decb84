#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A value protected by a `pthread_mutex_t`.
///
/// Why not `Synchronization.Mutex`: on Linux it is built from futexes inside
/// the (uninstrumented) standard library, so Thread Sanitizer cannot see its
/// happens-before edges and reports every access it protects as a race.
/// Thread Sanitizer intercepts pthread mutexes, and they cost the same
/// uncontended. The mutex lives in allocated memory because its address must
/// not move.
///
/// Package access: SpindleCombine and SpindleTesting use this lock too (for
/// the same Thread Sanitizer reason); it is not public API.
///
/// Thread safety: `withLock` from any thread; the value is only reachable
/// inside it.
package final class Lock<Value: ~Copyable> {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    // protected by `mutex`
    private var value: Value

    package init(_ value: consuming Value) {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        let result = pthread_mutex_init(mutex, nil)
        precondition(result == 0, "Spindle: pthread_mutex_init failed (\(result))")
        self.value = value
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value.
    @inline(__always)
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}

// The value is only reachable under the mutex, so the lock may be shared
// whenever the value itself may cross threads.
extension Lock: @unchecked Sendable where Value: Sendable & ~Copyable {}
