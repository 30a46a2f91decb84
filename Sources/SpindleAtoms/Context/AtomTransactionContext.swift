/// An ``AtomTransactionContext``'s layout in trivial fields, which
/// `AtomGraph.withLentContext` fills without counting the node.
@usableFromInline
struct LentContextBits {
    @usableFromInline let node: UnsafeMutableRawPointer
    @usableFromInline let generation: UInt64

    @inlinable
    init(node: UnsafeMutableRawPointer, generation: UInt64) {
        self.node = node
        self.generation = generation
    }
}

/// What an atom's computation uses to read the store: given to
/// ``ValueAtom/value(context:)``, ``StateAtom/defaultValue(context:)`` and
/// the other kinds' bodies.
///
/// `watch` makes the atom depend on another: when that one changes, this
/// one is computed again. `read` takes a value without depending on it.
///
/// > Important: A computation runs under the store's exclusion, as a
/// > reducer runs on its loop: keep it pure and quick, and never wait in
/// > it for another thread that uses the same store. A `set` made inside
/// > one is applied after the update in progress, as an update of its own.
///
/// **Thread safety:** any thread. In a task atom's body, after the task
/// starts, `watch` still makes a dependency (a change recomputes the atom
/// and cancels the task); once the atom was computed again or released,
/// `watch` reads without depending.
public struct AtomTransactionContext: Sendable {
    /// The node computing; through it, the store's core (which a context
    /// that a task keeps after its store is released keeps, closed: every
    /// operation then throws ``AtomError/storeClosed``). The node lets go
    /// of its value, and so of the task, when it is released or the store
    /// closes.
    @usableFromInline let guarded: GuardedNode<AnyAtomNode>
    @usableFromInline let generation: UInt64

    @usableFromInline
    init(node: AnyAtomNode, generation: UInt64) {
        guarded = GuardedNode(node: node)
        self.generation = generation
    }

    private func perform<Result>(_ body: (AtomGraph) throws(AtomError) -> Result) throws(AtomError) -> Result {
        try guarded.node.core.perform(body)
    }

    /// The value of `atom`, which this atom now depends on.
    /// - Throws: ``AtomError/cycle(path:)`` if `atom` depends on this one;
    ///   ``AtomError/storeClosed``.
    ///
    /// Inlinable, so that the usual watch (a recomputation watching what
    /// the last one did, in the same order) is specialized in the atom's
    /// module: its key compared and its value read as their own types.
    @inlinable
    public func watch<A: Atom>(_ atom: A) throws(AtomError) -> A.Produced {
        // Uncounted: the context holds the node.
        let matched = Unmanaged.passUnretained(guarded.node)._withUnsafeGuaranteedRef { node in
            node.isOperatingHere ? node.watchMatched(atom, generation: generation) : nil
        }
        if let matched { return matched }
        return try watchRecording(atom)
    }

    /// Every other watch: recorded, or made late, or a read.
    @usableFromInline
    func watchRecording<A: Atom>(_ atom: A) throws(AtomError) -> A.Produced {
        try guarded.node.core.watch(atom, from: guarded.node, generation: generation)
    }

    /// The value of `atom`, without depending on it.
    public func read<A: Atom>(_ atom: A) throws(AtomError) -> A.Produced {
        try perform { (graph: AtomGraph) throws(AtomError) in try graph.read(atom) }
    }

    /// Sets a state atom's value; inside a computation, after the update
    /// in progress.
    public func set<A: StateAtom>(_ value: A.Value, for atom: A) throws(AtomError) {
        try perform { (graph: AtomGraph) throws(AtomError) in try graph.set(value, for: atom) }
    }

    /// Runs `termination` when this value of the atom ends: when the atom
    /// is computed again, or released. Outside the store's exclusion.
    public func addTermination(_ termination: @escaping @Sendable () -> Void) {
        let node = guarded.node
        let generation = generation
        let added = (try? perform { (_: AtomGraph) throws(AtomError) -> Bool in
            guard !node.isReleased, node.generation == generation else { return false }
            node.addTermination(termination)
            return true
        }) ?? false
        if !added { termination() }
    }

    /// Keeps `object` alive until this value of the atom ends.
    public func keepUntilTermination<Object: Sendable>(_ object: Object) {
        addTermination { withExtendedLifetime(object) {} }
    }

    /// An updater that gives this value of the atom later values (a
    /// task's outcome, a sequence's elements, a loop's states).
    package func updater<Value: Sendable>(of _: Value.Type) throws(AtomError) -> AtomUpdater<Value> {
        let node = guarded.node
        let generation = generation
        return try perform { (graph: AtomGraph) throws(AtomError) in
            guard let updater = node.makeUpdater(generation: generation, in: graph) as? AtomUpdater<Value> else {
                preconditionFailure("SpindleAtoms: an updater of \(Value.self) for \(node.atomDescription)")
            }
            return updater
        }
    }

    /// Keeps the resource a kind needs beside the value (a spin atom's loop).
    func keepResource(_ resource: any Sendable) throws(AtomError) {
        let node = guarded.node
        try perform { (_: AtomGraph) throws(AtomError) in node.setResource(resource) }
    }
}
