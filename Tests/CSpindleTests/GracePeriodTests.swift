import CSpindle
import Foundation
import Synchronization
import Testing
import SpindleTestSupport

/// What the grace-period callbacks saw.
final class GraceRecord: Sendable {
    /// Calls per task, by index.
    let calls: Locked<[Int]>
    /// Callbacks run, in all.
    let total = Atomic<Int>(0)
    /// Whether the gate holder had left its section when the callback ran.
    let holderHadLeft = Atomic<Bool>(false)
    let holder = GateProbe()
    /// Set once the test asked for the callback (the holder keeps its
    /// section open until then).
    let asked = Atomic<Bool>(false)

    init(tasks: Int) {
        calls = Locked(Array(repeating: 0, count: tasks))
    }
}

/// A task's context: the record and the task's index.
final class GraceContext: Sendable {
    let record: GraceRecord
    let index: Int
    init(record: GraceRecord, index: Int) {
        self.record = record
        self.index = index
    }
}

/// Task memory for the tests (a loop's `LoopWords` in the engine).
/// Why @unchecked: a raw pointer is not Sendable; each task is handed to
/// exactly one registering thread, and read back after its callback ran.
struct TaskMemory: @unchecked Sendable {
    let base: UnsafeMutableRawPointer
    let count: Int

    init(count: Int) {
        self.count = count
        base = .allocate(byteCount: spindle_task_size() * count, alignment: 16)
    }

    func task(_ index: Int, context: UnsafeMutableRawPointer) -> OpaquePointer {
        spindle_task_init(base + index * spindle_task_size(), context)
    }

    func deinitialize(_ index: Int) {
        spindle_task_deinit(OpaquePointer(base + index * spindle_task_size()))
    }
}

private let graceCallback: @convention(c) (UnsafeMutableRawPointer?) -> Void = { context in
    let context = Unmanaged<GraceContext>.fromOpaque(context!).takeRetainedValue()
    let record = context.record
    if record.holder.inside.load(ordering: .sequentiallyConsistent) {
        record.holderHadLeft.store(record.holder.left.load(ordering: .sequentiallyConsistent), ordering: .sequentiallyConsistent)
    }
    record.calls.withLock { $0[context.index] += 1 }
    record.total.add(1, ordering: .sequentiallyConsistent)
}

extension CSpindleTarget {
    /// `spindle_task_after_grace_period`, which a stop waits on: Spindle's
    /// grace thread (liburcu's call_rcu thread sleeps 10 ms per wake-up).
    @Suite("spindle_task_after_grace_period: the stop's grace period")
    struct GracePeriodTests {
        /// The callback runs only after a gate section that was open when it
        /// was asked for has closed.
        @Test func theCallbackWaitsForAnOpenSection() throws {
            let record = GraceRecord(tasks: 1)
            let holder = TestThreads(1, name: "grace-holder") { _ in
                spindle_gate_enter()
                record.holder.inside.store(true, ordering: .sequentiallyConsistent)
                while !record.asked.load(ordering: .sequentiallyConsistent) { spindle_cpu_relax() }
                // Holds the section while the grace thread runs; on a machine
                // so slow that it does not get there, the check passes
                // without having been exercised, never the other way round.
                Thread.sleep(forTimeInterval: 0.05)
                record.holder.left.store(true, ordering: .sequentiallyConsistent)
                spindle_gate_exit()
            }
            while !record.holder.inside.load(ordering: .sequentiallyConsistent) { spindle_cpu_relax() }
            let memory = TaskMemory(count: 1)
            let context = Unmanaged.passRetained(GraceContext(record: record, index: 0)).toOpaque()
            spindle_task_after_grace_period(memory.task(0, context: context), graceCallback)
            record.asked.store(true, ordering: .sequentiallyConsistent)
            try waitForCallbacks(record, count: 1)
            #expect(holder.join())
            let holderHadLeft = record.holderHadLeft.load(ordering: .sequentiallyConsistent)
            #expect(holderHadLeft, "the callback ran while a section open before it was asked for was still open")
            memory.deinitialize(0)
            memory.base.deallocate()
        }

        /// Many threads ask at once: every callback runs exactly once.
        @Test func everyTaskIsCalledBackOnce() throws {
            let threads = 8
            let perThread = 200
            let record = GraceRecord(tasks: threads * perThread)
            let memory = TaskMemory(count: threads * perThread)
            let askers = TestThreads(threads, name: "grace-asker") { thread in
                for step in 0..<perThread {
                    let index = thread * perThread + step
                    let context = Unmanaged.passRetained(GraceContext(record: record, index: index)).toOpaque()
                    // Some askers inside a section of their own first (as an
                    // emit would be): the grace period must still end.
                    if step % 7 == 0 {
                        spindle_gate_enter()
                        spindle_gate_exit()
                    }
                    spindle_task_after_grace_period(memory.task(index, context: context), graceCallback)
                }
            }
            #expect(askers.join())
            try waitForCallbacks(record, count: threads * perThread)
            let wrong = record.calls.withLock { calls in calls.indices.filter { calls[$0] != 1 } }
            #expect(wrong.isEmpty, "tasks not called back exactly once: \(wrong.prefix(10))")
            for index in 0..<memory.count { memory.deinitialize(index) }
            memory.base.deallocate()
        }

        // Waits for a positive signal: `count` callbacks. The bound catches a
        // hang (a lost wake-up of the grace thread), not a slow machine.
        private func waitForCallbacks(_ record: GraceRecord, count: Int) throws {
            let deadline = ContinuousClock.now + hangGuard
            while record.total.load(ordering: .sequentiallyConsistent) < count, ContinuousClock.now < deadline {
                Thread.sleep(forTimeInterval: 0.001)
            }
            let ran = record.total.load(ordering: .sequentiallyConsistent)
            try #require(ran == count, "\(ran) of \(count) callbacks ran")
        }
    }
}
