internal import CSpindle

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A number identifying the calling OS thread among live threads: the
/// address of its lane table, a thread-local read inlined from CSpindle
/// (`pthread_self` is a call, on every emit).
@inline(__always)
func currentThreadToken() -> UInt {
    UInt(spindle_thread_token())
}

/// OS threads for the executors, named `name` (at most 15 bytes on Linux).
enum OSThread {
    private final class Start {
        let name: String
        let body: () -> Void
        init(name: String, body: @escaping () -> Void) {
            self.name = name
            self.body = body
        }
    }

    /// Starts a detached thread running `body`; nobody joins it (it ends
    /// when `body` returns). Throws when the system refuses a thread.
    static func spawnDetached(name: String, _ body: @escaping @Sendable () -> Void) throws(SpinExecutorError) {
        let start = Unmanaged.passRetained(Start(name: name, body: body)).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        #if canImport(Darwin)
        var handle: pthread_t?
        #else
        var handle = pthread_t()
        #endif
        let result = pthread_create(&handle, &attributes, { context in
            let start = Unmanaged<Start>.fromOpaque(context!).takeRetainedValue()
            spindle_thread_set_name(start.name)
            start.body()
            return nil
        }, start)
        if result != 0 {
            Unmanaged<Start>.fromOpaque(start).release()
            throw .threadUnavailable(errno: result)
        }
    }

}

/// Gives the CPU to another thread.
@inline(__always)
func yieldThread() { sched_yield() }
