#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A value protected by a `pthread_mutex_t`: SpindleTesting's own copy of
/// Spindle's internal lock, which is not public.
///
/// Why not `Synchronization.Mutex`: on Linux Thread Sanitizer cannot see its
/// happens-before edges; it does intercept pthread mutexes. The mutex lives
/// in allocated memory because its address must not move.
///
/// Thread safety: `withLock` from any thread; the value is only reachable
/// inside it.
final class Lock<Value> {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    // protected by `mutex`
    private var value: Value

    init(_ value: Value) {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        let result = pthread_mutex_init(mutex, nil)
        precondition(result == 0, "SpindleTesting: pthread_mutex_init failed (\(result))")
        self.value = value
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value.
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}

// The value is only reachable under the mutex, so the lock may be shared
// whenever the value itself may cross threads.
extension Lock: @unchecked Sendable where Value: Sendable {}
