#!/usr/bin/env bash
# Leak check under valgrind (issue 4): the C target's structures (queues,
# bounded lanes, parkers, with events still inside when destroyed) and start/stop
# cycles of loops with feedbacks in flight (stopped draining, discarding, or
# released without a stop), on every queue, under memcheck.
#
# Why a driver and not the test bundle: valgrind 3.19 (Debian 12's) crashes
# ("VALGRIND INTERNAL ERROR: ... SIGSEGV") in any Swift program with an async
# main, such as every Swift Testing bundle, as soon as a second thread starts
# while the main thread sits in dispatch's signal thread (sigsuspend). So
# the same scenarios as the C target tests and the stress suite's
# StartStopCycleStressTests run from a small executable compiled below
# against the package's own build products. It also checks
# SpindleLiveObjects is back to zero before exiting.
#
# Criterion: 0 bytes "definitely lost". Reachable memory at exit (the Swift
# runtime's metadata caches, dispatch's and liburcu's per-process state) is
# not a leak and is not counted. --error-exitcode also fails the run on any
# other memcheck error (invalid read/write, uninitialised use); known
# toolchain noise is listed, with the reason for each entry, in
# scripts/valgrind.supp.
#
#   SPINDLE_LEAK_CYCLES   start/stop cycles under valgrind (default 1000: memcheck
#                         runs threads one at a time, ~50x slower)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh valgrind

# A scratch path of its own: a plain debug build (no sanitizer: valgrind and
# TSan do not mix), out of the way of the normal .build. DWARF 4: valgrind
# 3.19 cannot read the toolchain's default DWARF 5.
scratch=.build/valgrind
dwarf=(-Xswiftc -dwarf-version=4 -Xcc -gdwarf-4)
echo "== build ($scratch)"
swift build --scratch-path "$scratch" --target Spindle "${dwarf[@]}"
products="$scratch/debug"

work=$(mktemp -d)
cat >"$work/main.swift" <<'SWIFT'
import CSpindle
import Foundation
@_spi(Testing) @_spi(Benchmarks) import Spindle

enum Event: Sendable { case external, fromSync, fromAsync, fromInline }

/// A queue made outside the engine (`QueueKind.custom`, SPI): its path
/// through the engine is checked for leaks too. An array behind an NSLock
/// that the runner swaps out whole, as the tests' LockedQueue does (this
/// driver, built outside the package, cannot import it); each drain moves
/// the events out of a buffer. `@unchecked Sendable`: `shared` is only
/// touched under `lock`, `buffer` and `head` only by the loop's runner.
final class ArrayQueue<E: Sendable>: CustomEventQueue, @unchecked Sendable {
    private let lock = NSLock()
    private var shared: [E] = []  // protected by lock
    // The loop's runner only: the events swapped out of `shared`, handed
    // out from `head` (moved out of `buffer`).
    private var buffer = UnsafeMutableBufferPointer<E>(start: nil, count: 0)
    private var head = 0

    deinit {
        if let base = buffer.baseAddress {
            (base + head).deinitialize(count: buffer.count - head)
            buffer.deallocate()
        }
    }

    func enqueue(_ event: E) { lock.withLock { shared.append(event) } }
    func enqueue(contentsOf events: UnsafeBufferPointer<E>) { lock.withLock { shared.append(contentsOf: events) } }

    func drain(max: Int, _ body: (UnsafeMutableRawPointer) -> Void) -> Int {
        var count = 0
        while count < max {
            if head == buffer.count {
                let taken = lock.withLock { () -> [E] in
                    defer { shared = [] }
                    return shared
                }
                buffer.deallocate()
                buffer = .allocate(capacity: taken.count)
                _ = buffer.initialize(fromContentsOf: taken)
                head = 0
                if taken.isEmpty { break }
            }
            body(UnsafeMutableRawPointer(buffer.baseAddress! + head))
            head += 1
            count += 1
        }
        return count
    }

    var isEmpty: Bool { head == buffer.count && looksEmpty }
    var looksEmpty: Bool { lock.withLock { shared.isEmpty } }
}

@main
struct LeakDriver {
    // A synchronous main that waits on a semaphore: with an async main the
    // main thread parks in dispatch's signal thread (sigsuspend), and
    // valgrind 3.19 then crashes on the next thread creation. Detached: a
    // plain Task would inherit the (blocked) main actor.
    static func main() {
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            await run()
            done.signal()
        }
        done.wait()
    }

    static func run() async {
        let cycles = Int(ProcessInfo.processInfo.environment["SPINDLE_LEAK_CYCLES"] ?? "") ?? 1000
        cTarget()
        await startStopCycles(cycles)
        // Released loops drain and exit in the background: wait for them.
        let deadline = Date().addingTimeInterval(120)
        while !SpindleLiveObjects.current.isEmpty, Date() < deadline {
            try? await Task.sleep(nanoseconds: 10_000_000)
        }
        let live = SpindleLiveObjects.current
        print("live objects at exit: \(live)")
        if !live.isEmpty { exit(2) }
    }

    /// The C structures, destroyed with events still inside.
    static func cTarget() {
        for round in 0..<200 {
            let queue = spindle_wfq_create(16, 8, 64)!
            for index in 0..<(round % 300) {
                let payload = spindle_wfq_acquire(queue)!
                payload.storeBytes(of: index, as: Int.self)
                spindle_wfq_enqueue(queue, payload)
            }
            spindle_wfq_destroy(queue)
            let lane = spindle_lane_create(UInt64(1 << 40) + UInt64(round), 8, 8, 4)!
            spindle_lane_set_budget(lane, 16)
            for index in 0..<(round % 20) {
                spindle_lane_begin(lane)
                guard let slot = spindle_lane_slot(lane) else {
                    spindle_lane_abort(lane)
                    break
                }
                slot.storeBytes(of: index, as: Int.self)
                spindle_lane_publish(lane, 1)
            }
            spindle_lane_destroy(lane)
            let parker = spindle_parker_create()!
            spindle_parker_destroy(parker)
        }
        print("C target: 200 rounds of queues, bounded lanes and parkers")
    }

    static let queues: [QueueKind] = [
        .lockFree, .bounded(capacity: 64, overflow: .block), .bounded(capacity: 8, overflow: .dropNewest),
        .bounded(capacity: 4096, overflow: .block),
        .custom(CustomEventQueueFactory(name: "array") { ArrayQueue<Event>() }),
    ]

    static let spin = Spin(initialState: 0) {
        Feedback<Int, Event>(effect: { count in count < 40 ? .fromSync : nil })
        Feedback<Int, Event>(effect: { (count: Int) async -> Event? in
            await Task.yield()
            return count % 3 == 0 && count < 60 ? .fromAsync : nil
        })
        Feedback<Int, Event>(effect: { count in count % 5 == 1 && count < 60 ? .fromInline : nil })
            .executeOnReducerThread()
        Reducer<Int, Event> { count, _ in count + 1 }
    }

    /// The stress suite's start/stop cycles, with strings in the events'
    /// path so that a payload leak would show.
    static func startStopCycles(_ cycles: Int) async {
        var failures = 0
        for cycle in 0..<cycles {
            guard let loop = try? spin.start(options: SpinOptions(queue: queues[cycle % queues.count])) else {
                print("cycle \(cycle): the loop could not start")
                exit(4)
            }
            for _ in 0..<8 { loop.emit(.external) }
            if cycle % 8 == 7 { continue }  // released without a stop
            let report = await loop.stop(cycle % 2 == 0 ? .drain : .discardPending)
            if report.reduced != loop.state { failures += 1 }
        }
        print("start/stop cycles: \(cycles), inconsistent reports: \(failures)")
        if failures > 0 { exit(3) }
    }
}
SWIFT

echo "== compile the leak driver"
mapfile -d '' objects < <(find "$products/Spindle.build" "$products/CSpindle.build" "$products/Atomics.build" \
    "$products/_AtomicsShims.build" "$products/Logging.build" -name '*.o' -print0)
swiftc -parse-as-library -g -Onone -dwarf-version=4 -Xcc -gdwarf-4 \
    -I "$products/Modules" \
    -Xcc -fmodule-map-file="$products/CSpindle.build/module.modulemap" -Xcc -ICSupport/include \
    -Xcc -fmodule-map-file="$(find "$scratch/checkouts" -path '*_AtomicsShims/include/module.modulemap' | head -1)" \
    "$work/main.swift" "${objects[@]}" -lurcu-common -lurcu-bp -o "$work/leak-driver"

log="$work/valgrind.log"
echo "== valgrind memcheck"
started=$(date +%s)
set +e
SPINDLE_LEAK_CYCLES=${SPINDLE_LEAK_CYCLES:-1000} \
valgrind --tool=memcheck --leak-check=full --errors-for-leak-kinds=definite \
    --show-leak-kinds=definite --error-exitcode=1 --num-callers=30 \
    --suppressions=scripts/valgrind.supp "$work/leak-driver" >"$log" 2>&1
rc=$?
set -e
grep -E "C target|start/stop cycles|live objects|definitely lost|indirectly lost|ERROR SUMMARY" "$log" \
    | sed 's/^==[0-9]*== /  /' || true
echo "  exit status $rc, $(( $(date +%s) - started )) s; log: $log"
# --error-exitcode covers definite leaks and memcheck errors; the driver
# exits non-zero itself when live objects remain or a report is wrong.
if [[ $rc -ne 0 ]] || ! grep -q "live objects at exit" "$log"; then
    echo "leak check FAILED (see the loss records in $log)" >&2
    exit 1
fi
echo "leak check passed: 0 bytes definitely lost, no memcheck errors, live objects back to zero"
