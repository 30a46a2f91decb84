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
/// uncontended.
///
/// One allocation: the mutex, whose address must not move, is the header
/// of a `ManagedBuffer` and the value its one element (a lock per loop is
/// a cost per connection to a server with a loop per connection). A value
/// type holding that buffer: copies share the one lock, as references to
/// a class instance would.
///
/// Package access: SpindleCombine and SpindleTesting use this lock too (for
/// the same Thread Sanitizer reason); it is not public API.
///
/// Thread safety: `withLock` from any thread; the value is only reachable
/// inside it.
package struct Lock<Value: ~Copyable> {
    @usableFromInline let storage: LockStorage<Value>

    @inlinable
    package init(_ value: consuming Value) {
        storage = unsafeDowncast(
            LockStorage<Value>.create(minimumCapacity: 1) { _ in pthread_mutex_t() }, to: LockStorage<Value>.self)
        var slot: Value? = consume value
        storage.withUnsafeMutablePointers { mutex, element in
            let result = pthread_mutex_init(mutex, nil)
            precondition(result == 0, "Spindle: pthread_mutex_init failed (\(result))")
            element.initialize(to: slot.take()!)
        }
    }

    /// Runs `body` with exclusive access to the value.
    @inlinable @inline(__always)
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try storage.withUnsafeMutablePointers { mutex, element in
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            return try body(&element.pointee)
        }
    }
}

/// `Lock`'s storage: the mutex (header) and the value (the one element).
@usableFromInline
final class LockStorage<Value: ~Copyable>: ManagedBuffer<pthread_mutex_t, Value> {
    @inlinable
    deinit {
        withUnsafeMutablePointers { mutex, element in
            pthread_mutex_destroy(mutex)
            element.deinitialize(count: 1)
        }
    }
}

// The value is only reachable under the mutex, so the lock may be shared
// whenever the value itself may cross threads.
extension Lock: @unchecked Sendable where Value: Sendable & ~Copyable {}
