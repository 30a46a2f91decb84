internal import CSpindle

/// The store's state: its nodes, the propagation queue, and what an
/// operation leaves to do once the exclusion is left (deliveries, ends).
///
/// Every member: guarded by the store's exclusion (``StoreCore``); the
/// class is reached only through `StoreCore.perform`. Its stored
/// properties are `@exclusivity(unchecked)` for the reason `AnyAtomNode`'s are.
@usableFromInline
final class AtomGraph {
    /// The core that owns the graph, for contexts and updaters (which hold
    /// it weakly: a task outliving its store does not keep it).
    unowned(unsafe) var core: StoreCore!
    @exclusivity(unchecked) var nodes = NodeIndex<AnyAtomNode>()
    @exclusivity(unchecked) var overrides: AtomOverrides
    @usableFromInline @exclusivity(unchecked) var observers: [any AtomObserver]
    @exclusivity(unchecked) var isClosed = false

    // MARK: Propagation

    /// Counts updates; a node's scheduled/processed marks compare with it.
    @exclusivity(unchecked) var epoch: UInt64 = 0
    /// Set while an update propagates; a set made then is deferred.
    @exclusivity(unchecked) var propagating = false
    /// Nodes to recompute, by height.
    @exclusivity(unchecked) var buckets = HeightBuckets()
    @exclusivity(unchecked) var pendingCount = 0
    @exclusivity(unchecked) var lowestBucket = 0

    // MARK: Computation

    /// The innermost node being computed; each computing node links to the
    /// one whose computation made it compute (a watch of one is a cycle).
    /// Unowned: a computing node is held by the computation's caller.
    @usableFromInline @exclusivity(unchecked) unowned(unsafe) var computing: AnyAtomNode?
    /// What the computations in progress watched, each from its own base.
    @usableFromInline @exclusivity(unchecked) var recorded: [AnyAtomNode] = []
    /// Stamps for the marks that compare dependency lists.
    @exclusivity(unchecked) var stamp: UInt64 = 0

    // MARK: What an operation leaves

    /// Deliveries to watchers and observers, in update order.
    @usableFromInline @exclusivity(unchecked) var outbox: [AtomDelivery] = []
    /// The delivered batch's buffer, kept for the next one.
    @exclusivity(unchecked) var spareOutbox: [AtomDelivery] = []
    /// Whether a thread is delivering: it delivers what others queue.
    @exclusivity(unchecked) var delivering = false
    /// Ends of values and terminations, run outside the exclusion.
    @usableFromInline @exclusivity(unchecked) var ends: [@Sendable () -> Void] = []
    /// Nodes that may have lost their last user in this operation.
    @exclusivity(unchecked) var releaseCandidates: [AnyAtomNode] = []
    /// Sets made during a computation or propagation, applied after it.
    @exclusivity(unchecked) var deferred: [(AtomGraph) -> Void] = []
    /// Nodes changed by the current update, for observers (only when there are some).
    @usableFromInline @exclusivity(unchecked) var changedNodes: [AnyAtomNode] = []

    init(overrides: AtomOverrides, observers: [any AtomObserver]) {
        self.overrides = overrides
        self.observers = observers
    }

    deinit {
        buckets.deallocate()
    }

    /// Inside a computation or a propagation: a set now is deferred.
    var isBusy: Bool { propagating || computing != nil }

    // MARK: Finding and making nodes

    /// The node for `atom`, made and computed if the store has none; a
    /// node scheduled in the running propagation is brought up to date
    /// first. `watcher`, the node that is about to watch it, is checked for
    /// a cycle. In `scope`, an atom it overrides is the scope's own node.
    func resolve<A: Atom>(
        _ atom: A, watcher: AnyAtomNode? = nil, in scope: AtomScope? = nil
    ) throws(AtomError) -> NodeOf<A> {
        let key = key(of: atom, in: scope)
        if let existing = nodes[key] {
            let node = unsafeDowncast(existing, to: NodeOf<A>.self)
            if node.isComputing { throw cyclePath(closingAt: node) }
            if let watcher, !watcher.dependents.isEmpty, node.height >= watcher.height,
               let path = dependencyPath(from: node, to: watcher) {
                throw AtomError.cycle(path: [watcher.atomDescription] + path)
            }
            bringUpToDate(node)
            return node
        }
        if isClosed { throw AtomError.storeClosed }
        // A scope's override is found again only here, where the node is made.
        let scoped = key.scope != 0 ? scope?.producer(for: atom) : nil
        let node = AtomNode(
            atom: atom, key: key, producer: scoped ?? overrides.producer(for: atom) ?? atom.producer, core: core)
        nodes.insert(node, for: key)
        node.processedEpoch = epoch
        do {
            try node.computeFirst(in: self)
        } catch {
            nodes.remove(node, for: key)
            node.isReleased = true
            throw error
        }
        addReleaseCandidate(node)
        return node
    }

    /// The value of `atom`, without watching it.
    func read<A: Atom>(_ atom: A, in scope: AtomScope? = nil) throws(AtomError) -> A.Produced {
        try resolve(atom, in: scope).value
    }

    /// A context's watch: `atom`'s value, recorded as a dependency of
    /// `node` while its value of `generation` is computing, made a late
    /// dependency after that (a task's body), and only read once the node
    /// has a newer value or was released.
    func watch<A: Atom>(_ atom: A, from node: AnyAtomNode, generation: UInt64) throws(AtomError) -> A.Produced {
        guard !node.isReleased, node.generation == generation else { return try read(atom) }
        return node.isComputing ? try watch(atom, from: node) : try watchLate(atom, from: node)
    }

    /// The value of `atom`, recorded as a dependency of `node`, which is
    /// computing.
    func watch<A: Atom>(_ atom: A, from node: AnyAtomNode) throws(AtomError) -> A.Produced {
        // A recomputation mostly watches what the last one did, in the same
        // order: while it does, each watch is the dependency at its
        // position, found without hashing the key and counted, not
        // recorded (its edge exists, so it closes no cycle). The first
        // watch that differs records the matched ones and goes on recording.
        if !node.diverged {
            let position = node.matched
            if position < node.dependencies.count, let value = node.value(ofDependencyAt: position, ifItIs: atom) {
                node.matched &+= 1
                return value
            }
            diverge(node)
        }
        let position = recorded.count &- node.recordBase
        if position < node.dependencies.count, let value = node.value(ofDependencyAt: position, ifItIs: atom) {
            recorded.append(node.dependencies[position].takeUnretainedValue())
            return value
        }
        let dependency = try resolve(atom, watcher: node)
        recorded.append(dependency)
        if dependency.height >= node.height { raiseHeight(of: node, to: dependency.height &+ 1) }
        return dependency.value
    }

    /// Ends the counting of matched watches: they are recorded, and what
    /// `node`'s computation watches from now on is too.
    @usableFromInline
    func diverge(_ node: AnyAtomNode) {
        node.diverged = true
        for position in 0..<node.matched { recorded.append(node.dependencies[position].takeUnretainedValue()) }
    }

    /// The value of `atom`, made a dependency of `node` after its
    /// computation (a task atom's body watching once it runs).
    func watchLate<A: Atom>(_ atom: A, from node: AnyAtomNode) throws(AtomError) -> A.Produced {
        let dependency = try resolve(atom, watcher: node)
        if !node.dependencies.contains(dependency),
           !node.lateDependencies.contains(where: { $0 === dependency }) {
            node.lateDependencies.append(dependency)
            dependency.dependents.append(node)
            if dependency.height >= node.height { raiseHeight(of: node, to: dependency.height &+ 1) }
        }
        return dependency.value
    }

    /// Runs `body` as `node`'s computation: marks it computing, records
    /// what it watches, and afterwards makes those its dependencies.
    @inlinable @inline(__always)
    func compute<Value>(
        _ node: AnyAtomNode, _ body: (inout AtomTransactionContext) throws(AtomError) -> Value
    ) throws(AtomError) -> Value {
        let base = recorded.count
        node.recordBase = base
        node.matched = 0
        node.diverged = false
        node.isComputing = true
        node.computingParent = computing
        computing = node
        defer {
            node.isComputing = false
            computing = node.computingParent
            node.computingParent = nil
        }
        let value: Value
        do {
            value = try withLentContext(of: node, body)
        } catch {
            recorded.removeSubrange(base...)
            throw error
        }
        // Every watch matched the last computation's, in order: the same
        // dependencies.
        if !node.diverged, node.matched == node.dependencies.count { return value }
        if !node.diverged { diverge(node) }
        updateDependencies(of: node, recordedFrom: base)
        recorded.removeSubrange(base...)
        return value
    }

    /// Runs `body` with a context that lends it `node`, uncounted: its
    /// bits are written in place and never destroyed, so that neither a
    /// retain nor a release of the node comes with a computation. The
    /// caller holds the node for the whole call. The context reaches
    /// `body` in place (`inout`, never copied); a copy that `body` makes,
    /// to keep beyond the computation (a task's), counts the node, as any
    /// copy of a context does.
    @inlinable @inline(__always)
    func withLentContext<Value>(
        of node: AnyAtomNode, _ body: (inout AtomTransactionContext) throws(AtomError) -> Value
    ) throws(AtomError) -> Value {
        var bits = LentContextBits(node: Unmanaged.passUnretained(node).toOpaque(), generation: node.generation)
        return try withUnsafeMutablePointer(to: &bits) { (bits) throws(AtomError) -> Value in
            try bits.withMemoryRebound(to: AtomTransactionContext.self, capacity: 1) {
                (context) throws(AtomError) -> Value in try body(&context.pointee)
            }
        }
    }

    /// Makes the nodes recorded from `base` on `node`'s dependencies (each
    /// once, in watch order), adding and removing edges only where the
    /// list changed.
    @usableFromInline
    func updateDependencies(of node: AnyAtomNode, recordedFrom base: Int) {
        stamp &+= 1
        let seen = stamp
        var kept = base
        for index in base..<recorded.count where recorded[index].mark != seen {
            recorded[index].mark = seen
            recorded[kept] = recorded[index]
            kept += 1
        }
        recorded.removeSubrange(kept...)
        if node.dependencies.elementsEqual(recorded[base...]) { return }
        stamp &+= 1
        let previous = stamp
        node.dependencies.forEach { dependency in
            if dependency.mark != seen {
                dependency.removeDependent(node)
                addReleaseCandidate(dependency)
            }
            dependency.mark = previous
        }
        for late in node.lateDependencies { late.mark = previous }
        for dependency in recorded[base...] where dependency.mark != previous {
            dependency.dependents.append(node)
        }
        if !node.lateDependencies.isEmpty {
            // A late dependency watched in the computation now: its edge
            // belongs to the list of the computation's.
            node.lateDependencies.removeAll { late in recorded[base...].contains { $0 === late } }
        }
        node.setDependencies(recorded[base...])
    }

    /// Gives `node` height `height` and its dependents heights above it,
    /// moving a node queued in the running propagation to its new bucket.
    private func raiseHeight(of node: AnyAtomNode, to height: Int) {
        node.height = height
        if isPending(node) { addToBucket(node) }
        node.dependents.forEach { dependent in
            if dependent.height <= height { raiseHeight(of: dependent, to: height &+ 1) }
        }
    }

    // MARK: Cycles

    /// The cycle that a watch of `node`, which is computing, would close:
    /// from `node` through what it is computing, back to `node`.
    private func cyclePath(closingAt node: AnyAtomNode) -> AtomError {
        var path = [node.atomDescription]
        var current = computing
        while let inner = current, inner !== node {
            path.append(inner.atomDescription)
            current = inner.computingParent
        }
        path.append(node.atomDescription)
        return .cycle(path: path.reversed())
    }

    /// The atoms from `node` down its dependencies to `target`, if `node`
    /// depends on `target` (a watch of `node` from `target` closes a cycle).
    private func dependencyPath(from node: AnyAtomNode, to target: AnyAtomNode) -> [String]? {
        stamp &+= 1
        let visited = stamp
        var trail: [AnyAtomNode] = []
        func search(_ current: AnyAtomNode) -> Bool {
            if current === target { return true }
            if current.mark == visited || current.height <= target.height { return false }
            current.mark = visited
            trail.append(current)
            for index in 0..<current.dependencies.count
            where search(current.dependencies[index].takeUnretainedValue()) { return true }
            for dependency in current.lateDependencies where search(dependency) { return true }
            trail.removeLast()
            return false
        }
        guard search(node) else { return nil }
        return trail.map(\.atomDescription) + [target.atomDescription]
    }

    // MARK: Propagation

    /// Starts an update: every node changed in it is recomputed at most once.
    func beginUpdate() {
        epoch &+= 1
        propagating = true
    }

    /// Recomputes what the update's changes reach, in height order, then
    /// tells observers.
    func endUpdate() {
        while pendingCount > 0 {
            while buckets.isEmpty(at: lowestBucket) { lowestBucket += 1 }
            let entry = buckets.removeLast(at: lowestBucket)
            pendingCount -= 1
            // The next node's own lines were prefetched when it was
            // scheduled: now what they point to loads while this one is
            // recomputed.
            buckets.peekLast(at: lowestBucket)?._withUnsafeGuaranteedRef { $0.prefetchReferenced() }
            entry._withUnsafeGuaranteedRef { node in
                // A stale entry (the node was moved to a higher bucket) or
                // one already brought up to date by a watch.
                if node.height != lowestBucket || node.processedEpoch == epoch || node.isReleased { return }
                process(node)
            }
        }
        lowestBucket = 0
        propagating = false
        if !changedNodes.isEmpty { notifyChanged() }
    }

    /// Whether the running propagation scheduled `node` and has not
    /// processed it yet.
    private func isPending(_ node: AnyAtomNode) -> Bool {
        propagating && node.scheduledEpoch == epoch && node.processedEpoch != epoch
    }

    /// Brings `node` up to date in the running propagation, so that a
    /// watch of it reads its value of this update: what it depends on that
    /// is due in this update is recomputed first, then `node` if that
    /// scheduled it.
    ///
    /// A node watched for the first time by a recomputation may stand at
    /// the recomputing node's height or above: its dependencies need not
    /// have been reached yet, and it is not scheduled although one of them
    /// is (an atom of the running height, recomputed later). Without the
    /// walk up, the watch would read its old value beside its
    /// dependencies' new ones, and keep it after the update.
    func bringUpToDate(_ node: AnyAtomNode) {
        guard propagating, node.processedEpoch != epoch else { return }
        // Nothing waits in the buckets: nothing upstream is due.
        if pendingCount > 0, node.height > lowestBucket {
            stamp &+= 1
            bringDependenciesUpToDate(of: node, visit: stamp)
        }
        if isPending(node) { process(node) }
    }

    /// Brings each dependency of `node` that may be due in the running
    /// propagation up to date, lowest first: the ones below the running
    /// height are done. Each node is visited once per walk (`mark`).
    private func bringDependenciesUpToDate(of node: AnyAtomNode, visit: UInt64) {
        for index in 0..<node.dependencies.count {
            node.dependencies[index]._withUnsafeGuaranteedRef { dependency in
                guard dependency.mark != visit, dependency.height >= lowestBucket,
                      dependency.processedEpoch != epoch, !dependency.isComputing else { return }
                dependency.mark = visit
                bringDependenciesUpToDate(of: dependency, visit: visit)
                if isPending(dependency) { process(dependency) }
            }
        }
    }

    /// Recomputes a scheduled node; a failure is reported and leaves its value.
    func process(_ node: AnyAtomNode) {
        node.processedEpoch = epoch
        do {
            _ = try node.recompute(in: self)
        } catch {
            report(error)
        }
    }

    /// A node's value changed: its dependents are scheduled. Inlined into
    /// a value's replacement: a watched leaf, the usual last node of a
    /// propagation, costs two checks and no call.
    @inlinable @inline(__always)
    func changed(_ node: AnyAtomNode) {
        // Through the buffer and uncounted: no retain of a dependent (each
        // listed one is alive, see `dependents`); a watched leaf has none.
        if !node.dependents.isEmpty { schedule(dependentsOf: node) }
        if !observers.isEmpty { changedNodes.append(node) }
    }

    @usableFromInline
    func schedule(dependentsOf node: AnyAtomNode) {
        // Every dependent's first line starts loading before the first is
        // read: their misses overlap instead of queueing behind each
        // other's bucket work.
        if node.dependents.count > 1 { node.prefetchDependents() }
        node.dependents.forEach { dependent in
            if dependent.scheduledEpoch == epoch { return }
            dependent.scheduledEpoch = epoch
            if dependent.processedEpoch != epoch {
                // Its recomputation reads the rest of the node: its lines
                // load while the others are scheduled and computed.
                spindle_prefetch(Unmanaged.passUnretained(dependent).toOpaque(), AnyAtomNode.prefetchedBytes)
                // And the first node it schedules in turn, if it changes:
                // its first line is what that schedule reads.
                if let next = dependent.dependents.first { spindle_prefetch(next, 64) }
                addToBucket(dependent)
            }
        }
    }

    private func addToBucket(_ node: AnyAtomNode) {
        buckets.append(node, at: node.height)
        pendingCount += 1
        if node.height < lowestBucket { lowestBucket = node.height }
    }

    /// An updater that feeds `node`'s value of `generation` later values.
    func updater<A: Atom>(for node: NodeOf<A>, generation: UInt64) -> AtomUpdater<A.Produced> {
        let guarded = GuardedNode(node: node)
        return AtomUpdater<A.Produced>(core: core) { graph, value in
            graph.feed(guarded.node, generation: generation, value: value)
        }
    }

    /// A value from the work that feeds `node`, for the value of `generation`.
    func feed<A: Atom>(_ node: NodeOf<A>, generation: UInt64, value: A.Produced) {
        if isBusy {
            deferred.append { graph in graph.feed(node, generation: generation, value: value) }
            return
        }
        guard !node.isReleased, node.generation == generation else { return }
        propagate(value, from: node)
    }

    /// One update from outside the graph: `node` takes `value` (it is up to
    /// date in this update: no dependency of it changed), and what watches
    /// it is recomputed if the value changed. A set, a modify and a feed.
    func propagate<A: Atom>(_ value: A.Produced, from node: NodeOf<A>) {
        // The dependents load while the value is replaced and delivered.
        node.prefetchDependents()
        beginUpdate()
        node.processedEpoch = epoch
        node.replaceValue(with: value, in: self)
        endUpdate()
    }

    // MARK: Lifetime

    func addReleaseCandidate(_ node: AnyAtomNode) {
        if node.isReleaseCandidate { return }
        node.isReleaseCandidate = true
        releaseCandidates.append(node)
    }

    /// The end of an operation: deferred sets, then the release of every
    /// node left unused.
    func finishOperation() {
        if isClosed {
            deferred.removeAll()
            return
        }
        while !deferred.isEmpty {
            let operation = deferred.removeFirst()
            operation(self)
        }
        while let node = releaseCandidates.popLast() {
            node.isReleaseCandidate = false
            if node.isReleased || node.isInUse { continue }
            releaseNode(node)
        }
    }

    func releaseNode(_ node: AnyAtomNode) {
        node.isReleased = true
        nodes.remove(node, for: node.key)
        for dependency in node.dependencies.array + node.lateDependencies {
            dependency.removeDependent(node)
            addReleaseCandidate(dependency)
        }
        node.clearDependencies()
        if !node.lateDependencies.isEmpty { node.lateDependencies = [] }
        node.release(in: self)
        if !observers.isEmpty {
            let atom = AtomDescription(node)
            tellObservers(.released(atom))
        }
    }

    // MARK: Observers

    func assigned(_ node: AnyAtomNode) {
        guard !observers.isEmpty else { return }
        let atom = AtomDescription(node)
        tellObservers(.assigned(atom))
    }

    private func tellObservers(_ event: ObserverDelivery.Event) {
        for observer in observers { outbox.append(.observer(ObserverDelivery(observer: observer, event: event))) }
    }

    private func notifyChanged() {
        let snapshot = makeSnapshot()
        for node in changedNodes where !node.isReleased {
            let atom = AtomDescription(node)
            tellObservers(.changed(atom, snapshot))
        }
        changedNodes.removeAll(keepingCapacity: true)
    }

    /// Runs `body`, reporting its failure (a deferred operation has no
    /// caller left to throw to).
    func reportingFailure(_ body: () throws(AtomError) -> Void) {
        do {
            try body()
        } catch {
            report(error)
        }
    }

    func report(_ error: AtomError) {
        tellObservers(.failed(error))
        core.logFailure(error)
    }

    func makeSnapshot() -> AtomSnapshot {
        var entries: [AtomKey: AtomSnapshot.Entry] = [:]
        entries.reserveCapacity(nodes.count)
        nodes.forEach { node in entries[node.key] = node.snapshotEntry() }
        return AtomSnapshot(entries: entries)
    }
}
