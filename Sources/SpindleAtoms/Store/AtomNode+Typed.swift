/// An atom's node with its value: what the store keeps for one atom.
///
/// Every stored property: guarded by the store's exclusion
/// (`@exclusivity(unchecked)`, as `AnyAtomNode`'s).
final class AtomNode<A: Atom>: AnyAtomNode {
    typealias Value = A.Produced

    let atom: A
    let producer: AtomProducer<Value>
    /// Whether a new value equal to the old one stops propagation here
    /// (an `Equatable` value; nil otherwise).
    let isEqual: ((Value, Value) -> Bool)?
    /// The value; nil only before the first computation and after release.
    @exclusivity(unchecked) var value: Value?
    /// The watchers from outside the graph, in the order they came.
    @exclusivity(unchecked) var watchers: [AtomWatcher<Value>] = []

    init(atom: A, key: AtomKey, producer: AtomProducer<Value>) {
        self.atom = atom
        self.producer = producer
        isEqual = equality(for: Value.self)
        super.init(key: key, keepAlive: atom is any KeepAlive)
    }

    override var atomDescription: String { String(describing: atom) }

    /// The first computation, for a node that was just made.
    func computeFirst(in graph: AtomGraph) throws(AtomError) {
        generation &+= 1
        let made = try graph.compute(self, producer.compute)
        value = made
        graph.assigned(self)
    }

    override func recompute(in graph: AtomGraph) throws(AtomError) -> Bool {
        generation &+= 1
        // The old computation's terminations run once the new value is in;
        // the new computation adds its own.
        var oldTerminations: [@Sendable () -> Void] = []
        swap(&oldTerminations, &terminations)
        let made: Value
        do {
            made = try graph.compute(self, producer.compute)
        } catch {
            // The old value stays, with its terminations; what the failed
            // computation added ends now.
            generation &-= 1
            swap(&oldTerminations, &terminations)
            graph.ends.append(contentsOf: oldTerminations)
            throw error
        }
        graph.ends.append(contentsOf: oldTerminations)
        return replaceValue(with: made, in: graph)
    }

    /// Stores `newValue` (from a recomputation, a set or the work that
    /// feeds the node); ends what the old value held; queues deliveries when
    /// it changed. Returns whether it changed.
    @discardableResult
    func replaceValue(with newValue: Value, in graph: AtomGraph) -> Bool {
        let old = value
        endValue(old, in: graph)
        value = newValue
        if let old, let isEqual, isEqual(old, newValue) { return false }
        for watcher in watchers {
            graph.outbox.append(WatcherDelivery(watcher: watcher, value: newValue))
        }
        graph.changed(self)
        return true
    }

    /// Queues the end of what `old` held (its producer's `end`: a task
    /// cancelled). Terminations belong to a computation: they end with the
    /// next one, or with the release.
    private func endValue(_ old: Value?, in graph: AtomGraph) {
        if let old, let end = producer.end {
            graph.ends.append { end(old) }
        }
    }

    override func release(in graph: AtomGraph) {
        endValue(value, in: graph)
        graph.ends.append(contentsOf: terminations)
        terminations.removeAll()
        value = nil
        resource = nil
        for watcher in watchers { watcher.cancel() }
        watchers.removeAll()
        watcherCount = 0
    }

    override func makeUpdater(generation: UInt64, in graph: AtomGraph) -> any Sendable {
        graph.updater(for: self, generation: generation)
    }

    override func snapshotEntry() -> AtomSnapshot.Entry {
        AtomSnapshot.Entry(description: atomDescription, value: value, isRestorable: producer.isRestorable)
    }

    override func restore(_ entry: AtomSnapshot.Entry, in graph: AtomGraph) -> Bool {
        guard producer.isRestorable, let restored = entry.value as? Value else { return false }
        return replaceValue(with: restored, in: graph)
    }
}

/// `==` for `Value` when it is `Equatable`, found once per node.
func equality<Value>(for type: Value.Type) -> ((Value, Value) -> Bool)? {
    guard let equatable = type as? any Equatable.Type else { return nil }
    return makeEquality(equatable, as: type)
}

private func makeEquality<E: Equatable, Value>(_: E.Type, as _: Value.Type) -> (Value, Value) -> Bool {
    // Value and E are the same type (the cast above succeeded): view each
    // value as E without a dynamic cast per comparison.
    { lhs, rhs in
        withUnsafePointer(to: lhs) { left in
            withUnsafePointer(to: rhs) { right in
                left.withMemoryRebound(to: E.self, capacity: 1) { l in
                    right.withMemoryRebound(to: E.self, capacity: 1) { r in l.pointee == r.pointee }
                }
            }
        }
    }
}
