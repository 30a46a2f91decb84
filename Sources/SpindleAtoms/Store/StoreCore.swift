internal import Atomics
import Logging
import Synchronization
internal import Spindle

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The store's exclusion around its graph, and the ordered delivery of
/// what an operation changed.
///
/// One thread at a time runs an operation on the graph (holding `mutex`);
/// a computation that calls the store again on that thread (a value atom
/// reading another, a set from inside a computation) runs inside the
/// operation in progress (`owner` tells it apart), so there is no
/// self-deadlock. Deliveries (watchers, observers) and ends (terminations,
/// cancellations, loop stops) run after the mutex is left; deliveries run
/// one at a time, in update order, on the thread that finds none running.
///
/// `@unchecked Sendable`: `graph` is reached only by the thread that holds
/// `mutex` (`owner` is that thread), which `perform` guarantees.
@usableFromInline
final class StoreCore: @unchecked Sendable {
    private let mutex = Lock<Void>(())
    /// The thread running an operation, or 0. Atomic: any thread reads it
    /// (relaxed: a thread can only find its own id there if it stored it).
    /// In the object: every watch of a computation reads it.
    @usableFromInline let owner = Atomic<UInt>(0)
    /// Guarded by `mutex` (the owner thread only).
    private let graph: AtomGraph
    /// The last number given to a scope.
    private let lastScopeID = ManagedAtomic<UInt64>(0)
    let logger: Logger

    init(overrides: AtomOverrides, observers: [any AtomObserver], logger: Logger) {
        graph = AtomGraph(overrides: overrides, observers: observers)
        self.logger = logger
        graph.core = self
    }

    /// A number for a new scope, unique in this store (never 0, the store's own).
    func makeScopeID() -> UInt64 {
        lastScopeID.wrappingIncrementThenLoad(ordering: .relaxed)
    }

    /// Runs `body` on the graph with the exclusion, then the operation's
    /// deferred sets and releases; after leaving it, the ends and the
    /// deliveries. Called again from inside an operation on the same
    /// thread, it runs `body` within that operation.
    @inline(__always)
    func perform<Result>(_ body: (AtomGraph) throws(AtomError) -> Result) throws(AtomError) -> Result {
        let thread = currentThreadID()
        if owner.load(ordering: .relaxed) == thread {
            return try body(graph)
        }
        return try performExclusively(thread: thread, body)
    }

    /// Whether the calling thread runs an operation on this store (a
    /// computation's watch, which may then read the graph in place).
    @inlinable
    var isOperatingHere: Bool { owner.load(ordering: .relaxed) == currentThreadID() }

    /// The graph's `bringUpToDate`, for a node's inlined watch; under the
    /// exclusion.
    @usableFromInline
    func bringUpToDate(_ node: AnyAtomNode) {
        graph.bringUpToDate(node)
    }

    /// A context's watch of `atom` for `node`'s value of `generation`:
    /// as `perform` would run it, without a closure on the usual path (a
    /// computation's watch, inside the operation on this thread), whose
    /// captures would be retained and released for each watch.
    @inline(__always)
    func watch<A: Atom>(_ atom: A, from node: AnyAtomNode, generation: UInt64) throws(AtomError) -> A.Produced {
        let thread = currentThreadID()
        if owner.load(ordering: .relaxed) == thread {
            return try graph.watch(atom, from: node, generation: generation)
        }
        return try performExclusively(thread: thread) { (graph: AtomGraph) throws(AtomError) in
            try graph.watch(atom, from: node, generation: generation)
        }
    }

    /// `perform` from outside an operation: apart, so that the nested path
    /// (a computation's watch) does not pay for this one's generic result
    /// type, whose metadata the runtime looks up.
    @inline(never)
    private func performExclusively<Result>(
        thread: UInt, _ body: (AtomGraph) throws(AtomError) -> Result
    ) throws(AtomError) -> Result {
        var ends: [@Sendable () -> Void] = []
        var batch: [AtomDelivery] = []
        let outcome: Swift.Result<Result, AtomError> = mutex.withLock { _ in
            owner.store(thread, ordering: .relaxed)
            defer { owner.store(0, ordering: .relaxed) }
            let outcome: Swift.Result<Result, AtomError>
            if graph.isClosed {
                outcome = .failure(.storeClosed)
            } else {
                do throws(AtomError) {
                    outcome = .success(try body(graph))
                } catch {
                    outcome = .failure(error)
                }
                graph.finishOperation()
            }
            swap(&ends, &graph.ends)
            if !graph.delivering, !graph.outbox.isEmpty {
                graph.delivering = true
                swap(&batch, &graph.spareOutbox)
                swap(&batch, &graph.outbox)
                take(batch)
            }
            return outcome
        }
        for end in ends { end() }
        if !batch.isEmpty { deliver(&batch) }
        return try outcome.get()
    }

    /// Under the exclusion, by the thread that takes `batch` to deliver it:
    /// the batch's watchers hand it their queued values.
    private func take(_ batch: [AtomDelivery]) {
        for index in batch.indices { batch[index].take() }
    }

    /// Delivers `batch`, then what others queued meanwhile, until none is
    /// left; the thread holds the delivering role throughout. In place: the
    /// buffers go back to the graph with their capacity, so a steady
    /// delivery allocates nothing.
    private func deliver(_ batch: inout [AtomDelivery]) {
        while true {
            // By index: each delivery is used in place, not copied out.
            for index in batch.indices { batch[index].deliver() }
            batch.removeAll(keepingCapacity: true)
            let more = mutex.withLock { _ in
                if graph.outbox.isEmpty {
                    graph.delivering = false
                    swap(&batch, &graph.spareOutbox)
                    return false
                }
                swap(&batch, &graph.outbox)
                take(batch)
                return true
            }
            if !more { return }
        }
    }

    /// Closes the store: every node is released (ends run), and every
    /// operation after it throws ``AtomError/storeClosed``.
    func close() {
        _ = try? perform { (graph: AtomGraph) throws(AtomError) in
            graph.isClosed = true
            for node in graph.nodes.all where !node.isReleased {
                graph.releaseNode(node)
            }
            graph.releaseCandidates.removeAll()
        }
    }

    func logFailure(_ error: AtomError) {
        logger.error("\(error.description)")
    }
}

/// The calling thread, as a number no other live thread has.
@inlinable @inline(__always)
func currentThreadID() -> UInt {
    #if canImport(Darwin)
    UInt(bitPattern: pthread_self())
    #else
    UInt(pthread_self())
    #endif
}
