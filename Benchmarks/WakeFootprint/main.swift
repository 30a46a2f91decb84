// What one sporadic round trip touches, counted instead of timed: a
// producer thread sleeps, evicts the caches (it reads a buffer larger than
// the simulated last level, as the work a machine does between two events
// would), emits one event and polls until an observer on the
// loop's executor has published its state, as `latency-sporadic-100us`
// does. `scripts/wake-footprint.sh` has callgrind count every thread of
// the process over two runs of different lengths and takes the difference
// per round trip: the instructions and the cache lines the round trip
// loads cold (the emit, the wake, the woken thread's whole run until it
// sleeps again, on the pool, a dedicated thread, or the `DispatchQueue`
// yardstick). Not a benchmark: it has no clock, and the harness's
// scenarios stay the figures of record.
//
// Usage: wake-footprint pool|dedicated|dispatch [round trips, default 2000] [evicted KiB, default 2048]

import Dispatch
import Spindle
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

let arguments = Array(CommandLine.arguments.dropFirst())
let engine = arguments.first ?? "pool"
let roundTrips = arguments.count > 1 ? Int(arguments[1]) ?? 2000 : 2000
let evictedBytes = (arguments.count > 2 ? Int(arguments[2]) ?? 2048 : 2048) * 1024

struct Count: Sendable {
    var received = 0
}

enum Tick: Sendable {
    case tick
}

final class Publisher: SpinObserver {
    typealias State = Count
    typealias Event = Tick
    let received = Atomic<Int>(0)
    func eventReduced(_ event: Tick, newState: Count, reduction: Int) {
        received.store(newState.received, ordering: .releasing)
    }
}

/// The yardstick: a serial queue, one `async` per event.
final class DispatchTarget: @unchecked Sendable {
    // @unchecked: `state` is touched only by blocks on `queue`, a serial
    // queue, which orders them.
    let queue = DispatchQueue(label: "wake-footprint")
    var state = Count()
    let received = Atomic<Int>(0)

    func send() {
        queue.async {
            self.state.received += 1
            self.received.store(self.state.received, ordering: .releasing)
        }
    }
}

/// Reads every line of `buffer`: what ran between two events.
@inline(never)
func evict(_ buffer: UnsafeMutableRawBufferPointer) -> UInt8 {
    var sum: UInt8 = 0
    var offset = 0
    while offset < buffer.count {
        sum &+= buffer[offset]
        offset &+= 64
    }
    return sum
}

/// The poll, apart so that it can be told from the round trip. It yields
/// between looks: valgrind runs one thread at a time, and a poll that
/// spins would hold the woken thread off for its whole time slice.
@inline(never)
func poll(_ received: borrowing Atomic<Int>, until index: Int) {
    while received.load(ordering: .acquiring) < index { sched_yield() }
}

/// `roundTrips` round trips through `send`, each after a pause and an
/// eviction, polling `received` for the event's state.
@inline(never)
func measured(_ received: borrowing Atomic<Int>, send: () -> Void) -> UInt8 {
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: evictedBytes, alignment: 64)
    defer { buffer.deallocate() }
    buffer.initializeMemory(as: UInt8.self, repeating: 1)
    var checksum: UInt8 = 0
    for index in 1...roundTrips {
        usleep(100)
        checksum &+= evict(buffer)
        send()
        poll(received, until: index)
    }
    return checksum
}

let checksum: UInt8
switch engine {
case "pool", "dedicated":
    let publisher = Publisher()
    var options = SpinOptions()
    if engine == "dedicated" { options.executor = .dedicatedThread }
    let loop = try Spin(initialState: Count(), feedbacks: [], reducer: Reducer { state, _ in
        Count(received: state.received + 1)
    }).observed(by: publisher).start(options: options)
    checksum = measured(publisher.received) { loop.emit(.tick) }
    // No `await loop.stop()`: an asynchronous main runs through
    // `dispatch_main`, whose signal thread valgrind 3.19 cannot run. The
    // polls saw every event's state.
    precondition(publisher.received.load(ordering: .relaxed) == roundTrips)
case "dispatch":
    let target = DispatchTarget()
    checksum = measured(target.received) { target.send() }
default:
    fatalError("wake-footprint: unknown engine \(engine) (pool, dedicated, dispatch)")
}
print("round trips answered: \(roundTrips) (checksum \(checksum))")
