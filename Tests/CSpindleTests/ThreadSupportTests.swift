import CSpindle
import Foundation
import Synchronization
import Testing
import SpindleTestSupport

/// The name a test thread read back from the kernel.
final class ThreadNameResult: Sendable {
    let name = Locked<String?>(nil)
}

extension CSpindleTarget {
    @Suite("Thread naming, CPU relax and TSan support")
    struct ThreadSupportTests {
        /// The TSan runtime defines `__tsan_init`; it is in the process exactly
        /// when the targets were built with `--sanitize=thread`.
        @Test func tsanEnabledMatchesTheSanitizerRuntime() {
            let runtimeLoaded = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__tsan_init") != nil
            #expect(spindle_tsan_enabled() == runtimeLoaded)
        }

        #if os(Linux)
        /// Read back through /proc/thread-self/comm, the kernel's copy
        /// (15 bytes at most on Linux).
        @Test("spindle_thread_set_name names the calling thread",
              arguments: [("spindle", "spindle"),
                          ("exactly-15-char", "exactly-15-char"),
                          ("spindle-reducer-thread", "spindle-reducer")])
        func setNameIsVisibleToTheKernel(name: String, expected: String) {
            let result = ThreadNameResult()
            let thread = TestThreads(1, name: "unnamed") { _ in
                spindle_thread_set_name(name)
                let comm = try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)
                result.name.withLock { $0 = comm?.trimmingCharacters(in: .newlines) }
            }
            #expect(thread.join())
            #expect(result.name.withLock { $0 } == expected)
        }
        #endif

        #if os(Linux)
        /// `spindle_thread_request_slice` sets the calling thread's slice
        /// (Linux 6.12 and later) and keeps its nice value, raised here on a
        /// thread of the test's own (`nice` is per thread on Linux); a
        /// `SCHED_BATCH` thread is left as it was. Each step is read back
        /// from the kernel. Assumes the test process runs under
        /// `SCHED_OTHER`, as processes do unless started under `chrt`.
        @Test func requestSliceKeepsNiceAndLeavesOtherPoliciesAlone() throws {
            let result = Locked<(steps: [String], raised: Int32)?>(nil)
            let thread = TestThreads(1, name: "slice-test") { _ in
                var policy: Int32 = -1
                var niceValue: Int32 = 0
                _ = spindle_thread_slice(&policy, &niceValue)
                let raised = niceValue + 3
                _ = nice(3)
                let granted = spindle_thread_request_slice(100_000)
                let after = spindle_thread_slice(&policy, &niceValue)
                var steps = ["granted \(granted), now \(after): policy \(policy), nice \(niceValue)"]
                // SCHED_BATCH (3; the Glibc module does not export the name).
                var parameters = sched_param()
                let batch = sched_setscheduler(0, 3, &parameters)
                let refused = spindle_thread_request_slice(200_000)
                let batchSlice = spindle_thread_slice(&policy, &niceValue)
                steps.append("batch \(batch): granted \(refused), now \(batchSlice): policy \(policy), nice \(niceValue)")
                result.withLock { $0 = (steps, raised) }
            }
            #expect(thread.join())
            let (steps, raised) = try #require(result.withLock { $0 })
            let slice: UInt64 = kernelHasCustomSlices ? 100_000 : 0
            #expect(steps == ["granted \(slice), now \(slice): policy 0, nice \(raised)",
                              "batch 0: granted 0, now \(slice): policy 3, nice \(raised)"])
        }
        #endif

        /// The target's `.offCooperativePool` trait: a test body (which may
        /// spin or wait on a semaphore for seconds) runs on its own
        /// dispatch queue's thread, not on a thread of Swift's cooperative
        /// pool that the async tests beside it need. Fails if the trait is
        /// dropped or stops applying to the tests of nested suites.
        @Test func testsRunOffTheCooperativePool() {
            let label = DedicatedQueueExecutor.current
            #expect(label?.hasPrefix("cspindle-test.") == true, "ran on \(label ?? "a thread of no test queue")")
        }

        @Test func cpuRelaxReturnsPromptly() {
            let start = ContinuousClock.now
            for _ in 0..<100_000 { spindle_cpu_relax() }
            #expect(ContinuousClock.now - start < .seconds(1))
        }

        /// Unshared, the canary is an ordinary increment (its race only shows
        /// when two threads call it, under TSan, in the stress suite).
        @Test func racyIncrementAddsOneWhenUnshared() {
            var counter = 41
            spindle_racy_increment(&counter)
            #expect(counter == 42)
            for _ in 0..<1000 { spindle_racy_increment(&counter) }
            #expect(counter == 1042)
        }
    }
}
