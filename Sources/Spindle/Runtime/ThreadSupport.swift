import CSpindle

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A number identifying the calling OS thread (its pthread id).
@inline(__always)
func currentThreadToken() -> UInt {
    #if canImport(Darwin)
    return UInt(bitPattern: pthread_self())
    #else
    return UInt(pthread_self())
    #endif
}

/// A joinable OS thread running `body`, named `name` (at most 15 bytes on
/// Linux).
struct OSThread: @unchecked Sendable {
    // @unchecked: pthread_t is a plain id (an integer on Linux, an opaque
    // pointer on Darwin) that pthread functions accept from any thread.
    let handle: pthread_t

    private final class Start {
        let name: String
        let body: () -> Void
        init(name: String, body: @escaping () -> Void) {
            self.name = name
            self.body = body
        }
    }

    static func spawn(name: String, _ body: @escaping @Sendable () -> Void) -> OSThread {
        let start = Unmanaged.passRetained(Start(name: name, body: body)).toOpaque()
        #if canImport(Darwin)
        var handle: pthread_t?
        #else
        var handle = pthread_t()
        #endif
        let result = pthread_create(&handle, nil, { context in
            let start = Unmanaged<Start>.fromOpaque(context!).takeRetainedValue()
            spindle_thread_set_name(start.name)
            start.body()
            return nil
        }, start)
        precondition(result == 0, "Spindle: pthread_create failed (\(result))")
        #if canImport(Darwin)
        return OSThread(handle: handle!)
        #else
        return OSThread(handle: handle)
        #endif
    }

    func join() { pthread_join(handle, nil) }

    func detach() { pthread_detach(handle) }
}

/// Gives the CPU to another thread.
@inline(__always)
func yieldThread() { sched_yield() }
