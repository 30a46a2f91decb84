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
/// Every one runs loops (a pool's threads, a dedicated thread), and asks the
/// kernel for short time slices as it starts (``reducerSlice``).
enum OSThread {
    /// The time slice a reducer thread asks the kernel for, in nanoseconds:
    /// Linux's shortest (0.1 ms; `spindle_thread_request_slice`, a no-op
    /// elsewhere and before Linux 6.12). A reducer thread runs for
    /// microseconds after each wake-up; with the default slice (0.75 ms
    /// times 1 + log2 of the cores) a wake-up on a core that a CPU-bound
    /// thread holds could wait until that thread's slice ran out, a
    /// millisecond or more, and a short slice lets it preempt at once. The
    /// thread's share of the CPU is the same; under contention its runs
    /// are cut finer.
    static let reducerSlice: UInt64 = 100_000

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
            _ = spindle_thread_request_slice(OSThread.reducerSlice)
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
