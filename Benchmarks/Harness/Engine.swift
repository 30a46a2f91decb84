import Dispatch
@_spi(Benchmarks) import Spindle
/// The engines compared side by side. The queue engines (`lockfree`, `bounded`,
/// `baseline`) vary the event queue on the default executor (the shared
/// reducer pool); the executor engines (`pool`, `dedicated`, `dispatch`,
/// `queued`) vary where the loop runs, on the default queue. Each scenario
/// lists the engines it runs and the yardstick its ratios are read against.
enum Engine: String, CaseIterable, Sendable {
    /// liburcu's wait-free concurrent queue with pooled nodes (`.lockFree`).
    case lockfree
    /// The bounded queue (`.bounded(capacity:overflow: .block)`): the default
    /// queue with admission control.
    case bounded
    /// The pure-Swift comparison queue: a mutex around a ring buffer
    /// (`BaselineQueue`, plugged in as a custom queue, SPI).
    case baseline
    /// The shared reducer pool (the default executor), default queue.
    case pool
    /// A thread of the loop's own (`.dedicatedThread`).
    case dedicated
    /// The yardstick for many loops: not Spindle but one serial
    /// `DispatchQueue` per loop doing `state = reduce(state, event)` in one
    /// `async` per event (the plain-Swift answer).
    case dispatch
    /// The shared pool, with the scenario's feedbacks on a serial dispatch
    /// queue of their own (`execute(on:)`): the cost of the hop.
    case queued
    /// The loop on a serial `DispatchQueue` of its own (`.queue(_:)`
    /// executor).
    case serialQueue = "serial-queue"
    /// The sporadic scenarios' limit: not Spindle and no engine, but a bare
    /// C round trip between two threads that park on futexes, each woken
    /// by the other (`cfutex_sporadic_run`): two wake-ups and nothing else.
    case futex
    /// The sporadic scenarios' floor: `futex` with the producer polling for
    /// the answer (`cfutex_one_wake_run`): one wake-up of a parked thread
    /// per round trip, the shape of every engine's (not Spindle).
    case futexOneWake = "futex-one-wake"
    /// The machine alone, for the latency scenario: not Spindle, and no
    /// engine at all but two spinning C threads over an SPSC ring, the
    /// producer paced as the scenario's is (`cspsc_paced_run`). Its p50 is
    /// a cache-line transfer, the floor of any engine's; its tail is the
    /// machine's own (kernel threads and other processes taking a core),
    /// which lands on the consumer's core in some runs and the producer's in
    /// others, as it does for the engines.
    case bare
    /// The HTTP scenario's yardstick: a plain NIO `ChannelInboundHandler`
    /// (not Spindle; the example server's `plain` mode).
    case plain
    /// The spin's reducer and replies called by a plain NIO handler, with
    /// no loop (the example server's `by-hand` mode).
    case byHand = "by-hand"
    /// SpindleNIO's `SpinHandler`: a loop per connection on its event loop.
    case spindleNIO = "spindle-nio"
    /// The atoms scenarios' subject: a SpindleAtoms `AtomStore` holding the
    /// scenario's graph of atoms.
    case atoms
    /// The atoms scenarios' yardstick: the same graph in plain OpenCombine
    /// (Combine on Apple platforms): a `CurrentValueSubject` per state atom,
    /// `map`, `removeDuplicates`, `combineLatest` and `multicast` for the
    /// derived ones, `sink` for the watches. OpenCombine has no
    /// `combineLatest`; the harness's own (`Support/CombineLatest.swift`)
    /// stands in on Linux.
    case combine
    /// The same graph as `@Observable` models with computed properties, each
    /// watch a `withObservationTracking` registered again after each change.
    case observation
    /// `spin-atom`: the loop is a `SpinAtom` in a store, with derived atoms
    /// watching its state.
    case watched
    /// `spin-atom`'s yardstick: the same spin started directly, no store.
    case unwatched

    /// The options of a loop of `Event`s for this engine; `boundedCapacity`
    /// applies to `bounded`. Called where `Event` is known (`ScenarioRun.start`),
    /// so that the baseline queue is specialized for it.
    func options<Event: Sendable>(boundedCapacity: Int, for _: Event.Type) -> SpinOptions {
        switch self {
        case .lockfree: SpinOptions(queue: .lockFree)
        case .bounded: SpinOptions(queue: .bounded(capacity: boundedCapacity, overflow: .block))
        case .baseline: SpinOptions(queue: .custom(BaselineQueue<Event>.factory))
        case .pool, .queued, .dispatch, .bare, .plain, .byHand, .spindleNIO,
             .atoms, .combine, .observation, .watched, .unwatched, .futex, .futexOneWake:
            SpinOptions(executor: .sharedPool)
        case .dedicated: SpinOptions(executor: .dedicatedThread)
        case .serialQueue: SpinOptions(executor: .queue(DispatchQueue(label: "benchmarks-serial-queue")))
        }
    }

    /// The queue engines, for the scenarios where the queue is what varies.
    static let queues: [Engine] = [.lockfree, .bounded, .baseline]

    /// One line for `--help`.
    var summary: String {
        switch self {
        case .lockfree: ".lockFree on the shared pool: liburcu wfcqueue, pooled nodes, batch splice"
        case .bounded: ".bounded(capacity: 65536, overflow: .block) on the shared pool: lanes and shared queue with admission control"
        case .baseline: "pure Swift on the shared pool: a mutex around a ring buffer (a custom queue, specialized)"
        case .pool: "the shared reducer pool (default executor), .lockFree queue"
        case .dedicated: "a dedicated thread for the loop (.dedicatedThread), .lockFree queue"
        case .dispatch: "yardstick: one serial DispatchQueue per loop, one async per event (not Spindle)"
        case .queued: "the shared pool, feedbacks on a serial queue of their own (execute(on:))"
        case .serialQueue: "the loop on a serial DispatchQueue of its own (.queue executor), .lockFree queue"
        case .futex: "the limit for a parked thread: a bare C round trip of two futex wake-ups (not Spindle)"
        case .futexOneWake: "the floor for a parked thread: one futex wake-up, the producer polling for the answer (not Spindle)"
        case .bare: "the machine alone: two spinning C threads over an SPSC ring, paced as the scenario's producer (not Spindle)"
        case .plain: "yardstick: a plain NIO ChannelInboundHandler (the example server's plain mode; not Spindle)"
        case .byHand: "the spin's reducer and replies in a plain NIO handler, no loop (the example server's by-hand mode)"
        case .spindleNIO: "SpindleNIO's SpinHandler: a loop per connection on its event loop"
        case .atoms: "SpindleAtoms: an AtomStore holding the scenario's graph of atoms"
        case .combine: "yardstick: the same graph in plain OpenCombine (subjects, map, removeDuplicates, combineLatest, sink)"
        case .observation: "the same graph as @Observable models, computed properties, withObservationTracking"
        case .watched: "a SpinAtom's loop with 1,000 derived atoms watching its state"
        case .unwatched: "yardstick: the same spin started directly, no atom store"
        }
    }
}
