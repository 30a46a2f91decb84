internal import Spindle

/// The node of atom type `A`.
@usableFromInline
typealias NodeOf<A: Atom> = AtomNode<A, A.Produced>

/// An atom's node with its value: what the store keeps for one atom.
///
/// `Value` is `A.Produced`, a generic parameter of its own: the class's
/// unspecialized code finds its metadata in the class's, where an
/// associated type would be looked up in `A`'s conformance at each use.
///
/// Every stored property: guarded by the store's exclusion
/// (`@exclusivity(unchecked)`, as `AnyAtomNode`'s).
@usableFromInline
final class AtomNode<A: Atom, Value: Sendable>: AnyAtomNode where A.Produced == Value {
    // In the order a recomputation reads them (see `AnyAtomNode`).

    /// The value's storage, initialized while `hasValue`: before the first
    /// computation and after release it holds none. Not a stored
    /// `Value?`: in this generic code every access to an optional of the
    /// value's type asks the runtime for that optional's metadata.
    @usableFromInline let slot = UnsafeMutablePointer<Value>.allocate(capacity: 1)
    @usableFromInline @exclusivity(unchecked) var hasValue = false
    // The kind's producer's parts (see `AtomProducer`), kept apart: its
    // specialized recomputation is the base's `recomputation`, and the
    // propagation reads the others in this order.
    @usableFromInline let compute: @Sendable (inout AtomTransactionContext) throws(AtomError) -> Value
    /// The producer's, or `==` for an `Equatable` value it left out: a new
    /// value equal to the old one stops propagation here.
    @usableFromInline let isEqual: (@Sendable (Value, Value) -> Bool)?
    @usableFromInline let end: (@Sendable (Value) -> Void)?
    @usableFromInline let atom: A
    // Not read by the propagation.
    let isRestorable: Bool
    let storedKey: AtomKey

    init(atom: A, key: AtomKey, producer: AtomProducer<Value>, core: StoreCore) {
        self.atom = atom
        compute = producer.compute
        // Not `??`: its generic operands would wrap the closure in thunks
        // that every comparison then goes through.
        if let given = producer.isEqual {
            isEqual = given
        } else {
            isEqual = equality(for: Value.self)
        }
        end = producer.end
        isRestorable = producer.isRestorable
        storedKey = key
        // The producer's specialized recomputation, if it is one for this
        // node's atom type; else the one compiled for every type.
        let recomputation: @Sendable (AnyAtomNode, AtomGraph) throws(AtomError) -> Bool
        if let specialized = producer.recompute, specialized.atomType == key.type {
            recomputation = specialized.body
        } else {
            recomputation = { node, graph throws(AtomError) in
                try unsafeDowncast(node, to: AtomNode<A, Value>.self).recomputeValue(in: graph)
            }
        }
        super.init(
            core: core, keepAlive: atom is any KeepAlive, atomType: key.type, valueStorage: slot,
            recomputation: recomputation)
    }

    deinit {
        clearValue()
        slot.deallocate()
    }

    override var key: AtomKey { storedKey }

    override func hasKey(_ key: AtomKey) -> Bool { storedKey == key }

    override var atomDescription: String { String(describing: atom) }

    /// The value: the node has one (it was computed and not released).
    @inlinable
    var value: Value {
        precondition(hasValue, "SpindleAtoms: the value of \(atom), which has none")
        return slot.pointee
    }

    @inlinable
    func storeValue(_ newValue: Value) {
        if hasValue {
            slot.pointee = newValue
        } else {
            slot.initialize(to: newValue)
            hasValue = true
        }
    }

    private func clearValue() {
        guard hasValue else { return }
        slot.deinitialize(count: 1)
        hasValue = false
    }

    /// The first computation, for a node that was just made.
    func computeFirst(in graph: AtomGraph) throws(AtomError) {
        generation &+= 1
        let made = try graph.compute(self, compute)
        storeValue(made)
        graph.assigned(self)
    }

    /// Computes the value again; whether it changed. Inlinable: the
    /// producer of an atom kind specializes it (`NodeRecompute`).
    @inlinable @inline(__always)
    func recomputeValue(in graph: AtomGraph) throws(AtomError) -> Bool {
        generation &+= 1
        // The old computation's terminations run once the new value is in;
        // the new computation adds its own. Set aside only when there are
        // any: the usual node has none, and moving an empty list out and
        // back would still retain and release it.
        let oldTerminations = terminations.isEmpty ? nil : takeTerminations()
        let made: Value
        do {
            made = try graph.compute(self, compute)
        } catch {
            // The old value stays, with its terminations; what the failed
            // computation added ends now.
            generation &-= 1
            if !terminations.isEmpty { graph.ends.append(contentsOf: takeTerminations()) }
            if let oldTerminations { terminations = oldTerminations }
            throw error
        }
        if let oldTerminations { graph.ends.append(contentsOf: oldTerminations) }
        return replaceValue(with: made, in: graph)
    }

    @inlinable
    func takeTerminations() -> [@Sendable () -> Void] {
        var taken: [@Sendable () -> Void] = []
        swap(&taken, &terminations)
        return taken
    }

    /// Stores `newValue` (from a recomputation, a set or the work that
    /// feeds the node); ends what the old value held; queues deliveries when
    /// it changed. Returns whether it changed.
    @inlinable @inline(__always) @discardableResult
    func replaceValue(with newValue: Value, in graph: AtomGraph) -> Bool {
        guard hasValue else {
            storeValue(newValue)
            return true
        }
        let old = slot.pointee
        endValue(old, in: graph)
        slot.pointee = newValue
        if isEqual?(old, newValue) == true { return false }
        if !watchers.isEmpty { queue(newValue, in: graph) }
        graph.changed(self)
        return true
    }

    /// Queues `value` for each watcher; the list is read in place. The
    /// delivery names the watcher uncounted: the node's reference outlives
    /// it (see `giveBack`).
    @inlinable
    func queue(_ value: Value, in graph: AtomGraph) {
        for index in 0..<watchers.count {
            let watcher = watchers[index]
            watcher._withUnsafeGuaranteedRef { unsafeDowncast($0, to: AtomWatcher<Value>.self).enqueue(value) }
            graph.outbox.append(.watcher(watcher))
        }
    }

    /// Adds a watcher from outside the graph (counted).
    func addWatcher(_ watcher: AtomWatcher<Value>) {
        watchers.append(watcher)
        _ = Unmanaged.passUnretained(watcher).retain()
    }

    /// Removes a watcher; whether it was there.
    func removeWatcher(_ watcher: AnyAtomWatcher, in graph: AtomGraph) -> Bool {
        guard let index = watchers.firstIndex(of: watcher) else { return false }
        giveBack(watchers[index], in: graph)
        watchers.remove(at: index)
        return true
    }

    /// Gives the node's counted reference to `watcher` back, through the
    /// outbox: deliveries run in the order they were queued, so every
    /// delivery that names the watcher, queued before this, runs first,
    /// and the reference keeps it alive for them.
    private func giveBack(_ watcher: Unmanaged<AnyAtomWatcher>, in graph: AtomGraph) {
        graph.outbox.append(.release(watcher))
    }

    /// Queues the end of what `old` held (its producer's `end`: a task
    /// cancelled). Terminations belong to a computation: they end with the
    /// next one, or with the release.
    @inlinable
    func endValue(_ old: Value, in graph: AtomGraph) {
        if let end {
            graph.ends.append { end(old) }
        }
    }

    override func release(in graph: AtomGraph) {
        if hasValue { endValue(slot.pointee, in: graph) }
        graph.ends.append(contentsOf: terminations)
        terminations.removeAll()
        clearValue()
        resource = nil
        for index in 0..<watchers.count {
            watchers[index]._withUnsafeGuaranteedRef { $0.cancel() }
            giveBack(watchers[index], in: graph)
        }
        watchers.removeAll()
    }

    override func makeUpdater(generation: UInt64, in graph: AtomGraph) -> any Sendable {
        graph.updater(for: self, generation: generation)
    }

    override func snapshotEntry() -> AtomSnapshot.Entry {
        AtomSnapshot.Entry(
            description: atomDescription, value: hasValue ? slot.pointee : nil, isRestorable: isRestorable)
    }

    override func restore(_ entry: AtomSnapshot.Entry, in graph: AtomGraph) -> Bool {
        guard isRestorable, let restored = entry.value as? Value else { return false }
        return replaceValue(with: restored, in: graph)
    }
}
