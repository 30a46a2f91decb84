internal import CSpindle

/// One atom's place in the graph: its edges, its rank and its lifetime.
/// The value and what it needs live in ``AtomNode``, the typed subclass.
///
/// Every stored property: guarded by the store's exclusion (``StoreCore``).
/// `@exclusivity(unchecked)`: that exclusion already makes each access
/// exclusive (one thread, and no access held across a call that could
/// reach the same property), so the runtime's dynamic checks would only
/// cost time on the propagation path.
@usableFromInline
class AnyAtomNode {
    // Stored properties in the order the propagation reads them (what a
    // scheduled node's recomputation touches first), the ones it does not
    // read last.
    /// The propagation that scheduled it, and the one that brought it up
    /// to date (pulled or recomputed in height order).
    @usableFromInline @exclusivity(unchecked) final var scheduledEpoch: UInt64 = 0
    @usableFromInline @exclusivity(unchecked) final var processedEpoch: UInt64 = 0
    /// 1 + the largest height of its dependencies: a node is recomputed
    /// after every dependency of lower height in a propagation.
    @exclusivity(unchecked) final var height = 0
    /// The nodes that watch this one (unordered), uncounted: each holds
    /// this one among its `dependencies`, and leaves this list when it stops
    /// watching it or is released, so each is alive while listed here.
    @usableFromInline @exclusivity(unchecked) final var dependents = ReferenceList<AnyAtomNode>()
    /// What the last computation watched, in the order it watched them;
    /// counted: the node holds each (see `setDependencies`).
    @usableFromInline @exclusivity(unchecked) final var dependencies = ReferenceList<AnyAtomNode>()
    /// The atom's type, to tell a node's kind without a dynamic cast.
    @usableFromInline let atomType: ObjectIdentifier
    /// Computes the value again; returns whether it changed (and queues
    /// the deliveries and ends of what it replaced). Chosen once, when the
    /// node is made: the producer's specialized one where it has one (see
    /// `NodeRecompute`), so a recomputation costs one indirect call and no
    /// check of the producer.
    private let recomputation: @Sendable (AnyAtomNode, AtomGraph) throws(AtomError) -> Bool
    @usableFromInline @exclusivity(unchecked) final var isReleased = false
    /// Set while its value is being computed: a watch of it then is a cycle.
    @usableFromInline @exclusivity(unchecked) final var isComputing = false
    @usableFromInline @exclusivity(unchecked) final var diverged = false
    /// Whether the end-of-operation release check has it queued.
    @exclusivity(unchecked) final var isReleaseCandidate = false
    /// Kept while no watcher and no dependent holds the node.
    let keepAlive: Bool
    /// How many of the computation's first watches were the last
    /// computation's dependencies, in order, while none differed; once one
    /// differed (`diverged`), the watches are in `recorded`.
    @usableFromInline @exclusivity(unchecked) final var matched = 0
    /// Where the node's computation in progress records its watches in the
    /// graph's `recorded` list.
    @usableFromInline @exclusivity(unchecked) final var recordBase = 0
    /// While computing: the node computing when this one began (see
    /// `AtomGraph.computing`).
    @usableFromInline @exclusivity(unchecked) final unowned(unsafe) var computingParent: AnyAtomNode?
    /// Counts the node's values; an updater made for an older one is stale.
    @usableFromInline @exclusivity(unchecked) final var generation: UInt64 = 0

    /// Terminations added by the computation of the current value.
    @usableFromInline @exclusivity(unchecked) final var terminations: [@Sendable () -> Void] = []
    /// The watchers from outside the graph (store watches and test
    /// watches), in the order they came; counted: the node holds each
    /// (`AtomNode.addWatcher` retains it; its removal and the node's
    /// release give it back through the outbox, after the deliveries that
    /// name it). Each is an `AtomWatcher` of the node's value type.
    @usableFromInline @exclusivity(unchecked) final var watchers = ReferenceList<AnyAtomWatcher>()
    /// The store's core, for the contexts of the node's computations.
    /// Strong: the graph holds its nodes and each node the core, a cycle
    /// that closing the store (which its ``AtomStore`` does when released)
    /// breaks by releasing every node; a node a task keeps after that
    /// keeps the closed core.
    @usableFromInline final let core: StoreCore
    /// Where the typed subclass keeps the value, for `prefetchReferenced`.
    final let valueStorage: UnsafeRawPointer

    // Not read by the propagation. The key is the typed subclass's, after
    // its own fields: what a propagation reads fills the node's first
    // lines (see `prefetchedBytes`).
    /// A stamp for the graph's walks: comparing dependency lists (a node
    /// watched twice in one computation is one edge), searching for a cycle.
    @exclusivity(unchecked) final var mark: UInt64 = 0
    /// What few nodes have, made when first needed.
    @exclusivity(unchecked) final var extras: NodeExtras?

    /// How much of a node the propagation prefetches once it schedules it:
    /// the fields above and the typed subclass's value, the producer's
    /// parts and the atom. Computed, not stored: a constant, without a
    /// lazy global's check.
    static var prefetchedBytes: Int { 320 }

    init(
        core: StoreCore, keepAlive: Bool, atomType: ObjectIdentifier, valueStorage: UnsafeRawPointer,
        recomputation: @escaping @Sendable (AnyAtomNode, AtomGraph) throws(AtomError) -> Bool
    ) {
        self.recomputation = recomputation
        self.core = core
        self.valueStorage = valueStorage
        self.atomType = atomType
        self.keepAlive = keepAlive
    }

    /// What a task's body watched after the computation returned: kept until
    /// the node is released (the next task watches them again, and must
    /// find them in use).
    final var lateDependencies: [AnyAtomNode] {
        get { extras?.lateDependencies ?? [] }
        _modify {
            let extras = madeExtras()
            yield &extras.lateDependencies
        }
    }

    /// What the computation keeps beside the value (a spin atom's loop).
    final var resource: (any Sendable)? {
        get { extras?.resource }
        set { if newValue != nil || extras != nil { madeExtras().resource = newValue } }
    }

    private final func madeExtras() -> NodeExtras {
        if let extras { return extras }
        let made = NodeExtras()
        extras = made
        return made
    }

    deinit {
        dependencies.releaseAll()
        dependencies.deallocate()
        dependents.deallocate()
        // Only a node never released still lists watchers here: its graph
        // is gone, and with it every delivery that could name them.
        watchers.releaseAll()
        watchers.deallocate()
    }

    /// Starts loading what the node's recomputation reads outside the
    /// node (its value's storage, its first watcher): a hint.
    final func prefetchReferenced() {
        spindle_prefetch(valueStorage, 1)
        if !watchers.isEmpty { spindle_prefetch(watchers.opaque(at: 0), 128) }
    }

    /// Starts loading the first line of each dependent: their misses
    /// overlap instead of coming one after another as they are scheduled.
    final func prefetchDependents() {
        for index in 0..<dependents.count { spindle_prefetch(dependents.opaque(at: index), 64) }
    }

    /// In use: watched, a dependency of a node in use, or kept alive.
    final var isInUse: Bool { keepAlive || !watchers.isEmpty || !dependents.isEmpty || isComputing }

    // MARK: The typed part (overridden by AtomNode)

    /// The atom's identity in the store.
    var key: AtomKey { fatalError("abstract") }
    /// Whether the node's key is `key`, compared in place (`key` returns a copy).
    func hasKey(_ key: AtomKey) -> Bool { fatalError("abstract") }

    /// The atom, for cycle paths and observers.
    var atomDescription: String { fatalError("abstract") }
    /// Computes the value again; returns whether it changed (and queues
    /// the deliveries and ends of what it replaced).
    final func recompute(in graph: AtomGraph) throws(AtomError) -> Bool {
        try recomputation(self, graph)
    }
    /// Queues what releasing the node must do outside the exclusion.
    func release(in graph: AtomGraph) { fatalError("abstract") }
    /// The node's value for a snapshot.
    func snapshotEntry() -> AtomSnapshot.Entry { fatalError("abstract") }
    /// An `AtomUpdater` of the node's value type for its value of `generation`.
    func makeUpdater(generation: UInt64, in graph: AtomGraph) -> any Sendable { fatalError("abstract") }
    /// Writes a snapshot's value back, for a restorable node; whether it changed.
    func restore(_ entry: AtomSnapshot.Entry, in graph: AtomGraph) -> Bool { fatalError("abstract") }

    final func addTermination(_ termination: @escaping @Sendable () -> Void) {
        terminations.append(termination)
    }

    final func setResource(_ resource: any Sendable) {
        self.resource = resource
    }

    // MARK: Edges

    final func removeDependent(_ node: AnyAtomNode) {
        if let index = dependents.firstIndex(of: node) { dependents.swapRemove(at: index) }
    }

    /// Makes `nodes` the dependencies, counted: the new ones are retained
    /// before the old ones are released, so a node in both lists stays alive.
    final func setDependencies(_ nodes: ArraySlice<AnyAtomNode>) {
        for node in nodes { _ = Unmanaged.passUnretained(node).retain() }
        dependencies.releaseAll()
        dependencies.replace(with: nodes)
    }

    /// Whether the calling thread runs an operation on the node's store
    /// (and so holds the exclusion that guards the node).
    @inlinable
    final var isOperatingHere: Bool { core.isOperatingHere }

    /// A computation's watch of `atom` that matches, in its position, the
    /// last computation's dependency (the usual watch): that dependency's
    /// value, brought up to date if the running propagation scheduled it;
    /// nil for any other watch, which the graph records (`AtomGraph.watch`).
    /// The caller holds the exclusion. Inlinable, for the context's `watch`.
    @inlinable @inline(__always)
    final func watchMatched<A: Atom>(_ atom: A, generation: UInt64) -> A.Produced? {
        guard !isReleased, self.generation == generation, isComputing, !diverged else { return nil }
        let position = matched
        guard position < dependencies.count, let value = value(ofDependencyAt: position, ifItIs: atom) else {
            return nil
        }
        matched &+= 1
        return value
    }

    /// The value of the dependency at `position` if it is `atom`'s node
    /// (and not computing), brought up to date if the running propagation
    /// scheduled it; nil if it is another atom's. Uncounted: the node holds
    /// its dependencies. The caller holds the exclusion.
    @inlinable @inline(__always)
    final func value<A: Atom>(ofDependencyAt position: Int, ifItIs atom: A) -> A.Produced? {
        dependencies[position]._withUnsafeGuaranteedRef { candidate -> A.Produced? in
            guard candidate.atomType == ObjectIdentifier(A.self) else { return nil }
            let known = unsafeDowncast(candidate, to: NodeOf<A>.self)
            guard !known.isComputing, known.atom.key == atom.key else { return nil }
            // Scheduled in some update and not processed since: the graph
            // checks whether that is the running one.
            if known.scheduledEpoch > known.processedEpoch { core.bringUpToDate(known) }
            return known.value
        }
    }

    /// Lets go of every dependency (the node is released).
    final func clearDependencies() {
        dependencies.releaseAll()
        dependencies.removeAll()
    }
}

/// A node's rarely used parts: a task atom's late dependencies, a spin
/// atom's loop. Guarded by the store's exclusion, as the node.
final class NodeExtras {
    @exclusivity(unchecked) var lateDependencies: [AnyAtomNode] = []
    @exclusivity(unchecked) var resource: (any Sendable)?
}

/// A node carried by a context, an updater or a subscription to another
/// thread. `@unchecked Sendable`: it is touched only inside
/// `StoreCore.perform`, under the store's exclusion.
@usableFromInline
struct GuardedNode<Node: AnyAtomNode>: @unchecked Sendable {
    @usableFromInline let node: Node
}
