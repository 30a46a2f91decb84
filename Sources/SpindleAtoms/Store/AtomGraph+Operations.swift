/// The store's operations on the graph, each run by `StoreCore.perform`.
extension AtomGraph {
    /// Sets a state atom's value and propagates it. Inside a computation
    /// or a propagation, it is applied after that, as an update of its own.
    func set<A: StateAtom>(_ value: A.Value, for atom: A, in scope: AtomScope? = nil) throws(AtomError) {
        if isBusy {
            deferred.append { graph in
                graph.reportingFailure { () throws(AtomError) in try graph.set(value, for: atom, in: scope) }
            }
            return
        }
        propagate(value, from: try resolve(atom, in: scope))
    }

    /// Changes a state atom's value in place and propagates it.
    func modify<A: StateAtom>(
        _ atom: A, in scope: AtomScope? = nil, _ body: @escaping @Sendable (inout A.Value) -> Void
    ) throws(AtomError) {
        if isBusy {
            deferred.append { graph in
                graph.reportingFailure { () throws(AtomError) in try graph.modify(atom, in: scope, body) }
            }
            return
        }
        let node = try resolve(atom, in: scope)
        var value = node.value
        body(&value)
        propagate(value, from: node)
    }

    /// Computes an atom in use again (a state atom's default, a task run
    /// again) and propagates the new value; an atom not in use is computed
    /// as a read is. Returns the new value.
    func refresh<A: Atom>(_ atom: A, in scope: AtomScope? = nil) throws(AtomError) -> A.Produced {
        if isBusy {
            deferred.append { graph in
                graph.reportingFailure { () throws(AtomError) in _ = try graph.refresh(atom, in: scope) }
            }
            return try read(atom, in: scope)
        }
        guard let existing = nodes[key(of: atom, in: scope)] else { return try read(atom, in: scope) }
        let node = unsafeDowncast(existing, to: NodeOf<A>.self)
        beginUpdate()
        node.processedEpoch = epoch
        do {
            _ = try node.recompute(in: self)
        } catch {
            endUpdate()
            throw error
        }
        endUpdate()
        return node.value
    }

    /// Adds a watcher to `atom` (made if needed); `initial` gets the value
    /// it starts from, inside the operation (before any later delivery).
    func addWatcher<A: Atom>(
        to atom: A, in scope: AtomScope? = nil,
        onUpdate: @escaping @Sendable (A.Produced) -> Void, initial: (A.Produced) -> Void
    ) throws(AtomError) -> (node: NodeOf<A>, watcher: AtomWatcher<A.Produced>) {
        let node = try resolve(atom, in: scope)
        let watcher = AtomWatcher(onUpdate: onUpdate)
        node.addWatcher(watcher)
        initial(node.value)
        return (node, watcher)
    }

    /// Removes a watcher; the atom is released at the end of the operation
    /// if nothing else uses it.
    func removeWatcher<A: Atom>(_ watcher: AtomWatcher<A.Produced>, from node: NodeOf<A>) {
        watcher.cancel()
        guard !node.isReleased, node.removeWatcher(watcher, in: self) else { return }
        addReleaseCandidate(node)
    }

    /// The resource kept beside `atom`'s value (a spin atom's loop), if
    /// the atom is in use.
    func resource<A: Atom>(of atom: A, in scope: AtomScope? = nil) -> (any Sendable)? {
        nodes[key(of: atom, in: scope)]?.resource
    }

    /// The key of `atom`'s node as seen from `scope`: the scope's own
    /// when the scope overrides it.
    func key<A: Atom>(of atom: A, in scope: AtomScope?) -> AtomKey {
        if let scope, scope.overrides(atom) { return AtomKey(atom, scope: scope.id) }
        return AtomKey(atom)
    }

    /// Writes a snapshot's restorable values back (the state atoms still in
    /// use) and propagates them as one update.
    func restore(_ snapshot: AtomSnapshot) {
        if isBusy {
            deferred.append { graph in graph.restore(snapshot) }
            return
        }
        beginUpdate()
        for (key, entry) in snapshot.entries where entry.isRestorable {
            guard let node = nodes[key] else { continue }
            node.processedEpoch = epoch
            _ = node.restore(entry, in: self)
        }
        endUpdate()
    }
}
