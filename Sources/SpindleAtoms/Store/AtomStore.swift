public import Logging
public import Spindle

/// The root that holds atoms' values: read, watch, set, refresh and reset
/// them. An atom's value lives while something watches it (or it is
/// ``KeepAlive``) and is released when its last watcher goes.
///
/// When an atom changes, the store recomputes what watches it, downstream,
/// and only what is in use: each atom at most once, after every atom it
/// watches (glitch-free), and a value equal to the old one (`Equatable`)
/// stops the propagation there.
///
/// @Snippet(path: "Spindle/Snippets/SpindleAtoms/AtomsGettingStarted", slice: "store")
///
/// > Important: **Where code runs.** An operation (`read`, `watch`, `set`…)
/// > runs on the calling thread, exclusive of the store's other operations;
/// > the atoms' computations it causes run there too, inside it, so a set
/// > returns with every watched atom up to date. Watchers and observers are
/// > called after the operation leaves the exclusion, one at a time and in
/// > update order, by the thread whose operation found no delivery in
/// > progress — usually the caller, before its `set` returns; under
/// > contention, the thread delivering at the time.
///
/// > Important: A watcher sees every value of its atom from the one its
/// > watch began with, in order, each once — except equal values, which
/// > do not propagate. After ``AtomSubscription/cancel()`` returns, no call
/// > of its callback starts.
///
/// **Thread safety:** every member may be used from any thread or actor,
/// the main actor included. Close the store (or release it) to release
/// every atom; operations on a closed store throw ``AtomError/storeClosed``.
public final class AtomStore: Sendable {
    let core: StoreCore
    /// A scoped store's overrides (nil: the store itself).
    let scope: AtomScope?

    /// Makes a store.
    /// - Parameters:
    ///   - overrides: values that replace atoms' own (tests, previews).
    ///   - observers: told of every atom assigned, changed and released.
    ///   - logger: where failures the store finds while propagating are logged.
    public init(
        overrides: [AtomOverride] = [], observers: [any AtomObserver] = [],
        logger: Logger = Logger(label: "SpindleAtoms")
    ) {
        core = StoreCore(overrides: AtomOverrides(overrides), observers: observers, logger: logger)
        scope = nil
    }

    private init(core: StoreCore, scope: AtomScope) {
        self.core = core
        self.scope = scope
    }

    deinit {
        if scope == nil { core.close() }
    }

    /// A view of this store in which `overrides` replace atoms' values:
    /// the Atomic Architecture's scoped override (`AtomScope`), for one
    /// screen, one request or one preview inside a program that shares
    /// everything else.
    ///
    /// An atom the scope overrides is the scope's own: read, watched, set
    /// or refreshed through the scoped store, it has a value of its own,
    /// kept apart from the store's (and from other scopes') and released
    /// when its last watcher goes. Every other atom is the store's: the
    /// scoped store reads, watches and sets the same values as the store,
    /// and an atom computed from an overridden one is computed in the store,
    /// from the store's value — override it in the scope too when it must
    /// see the scope's. A scope of a scope has both scopes' overrides (the
    /// inner one's win where both override an atom).
    ///
    /// The scoped store shares the store's lifetime: releasing it releases
    /// nothing but its watches; ``close()`` on it closes the whole store.
    /// Observers see a scope's atoms (``AtomDescription/isScoped``).
    ///
    /// @Snippet(path: "Spindle/Snippets/SpindleAtoms/AtomsTesting", slice: "scoped")
    public func scoped(overriding overrides: [AtomOverride]) -> AtomStore {
        let inherited = scope?.overrides ?? AtomOverrides([])
        let merged = inherited.merging(AtomOverrides(overrides))
        return AtomStore(core: core, scope: AtomScope(id: core.makeScopeID(), overrides: merged))
    }

    /// The value of `atom`, without watching it: an atom not in use is
    /// computed and released again at once.
    /// - Throws: ``AtomError/cycle(path:)``, ``AtomError/storeClosed``.
    public func read<A: Atom>(_ atom: A) throws(AtomError) -> A.Produced {
        try core.perform { (graph: AtomGraph) throws(AtomError) in try graph.read(atom, in: self.scope) }
    }

    /// Watches `atom`: `onUpdate` is called with each new value, until the
    /// subscription is cancelled or released.
    /// - Parameters:
    ///   - atom: the atom to watch.
    ///   - onUpdate: called with each value after the one the watch began
    ///     with (``AtomSubscription/initialValue``).
    /// - Returns: the subscription: it keeps the atom in use.
    /// - Throws: ``AtomError/cycle(path:)``, ``AtomError/storeClosed``.
    public func watch<A: Atom>(
        _ atom: A, onUpdate: @escaping @Sendable (A.Produced) -> Void
    ) throws(AtomError) -> AtomSubscription<A.Produced> {
        var initial: A.Produced?
        let added = try core.perform { (graph: AtomGraph) throws(AtomError) in
            try graph.addWatcher(to: atom, in: self.scope, onUpdate: onUpdate) { initial = $0 }
        }
        return AtomSubscription(core: core, node: added.node, watcher: added.watcher, initialValue: initial!)
    }

    /// The values of `atom` as an asynchronous sequence: the current value
    /// first, then each new one. It keeps the atom in use until it ends
    /// (its task is cancelled, or the sequence and its iterators are
    /// released).
    /// - Parameters:
    ///   - atom: the atom to watch.
    ///   - bufferingPolicy: how values wait while the consumer lags;
    ///     `.bufferingNewest(1)` conflates to the latest.
    /// - Throws: ``AtomError/cycle(path:)``, ``AtomError/storeClosed``.
    public func values<A: Atom>(
        of atom: A, bufferingPolicy: AsyncStream<A.Produced>.Continuation.BufferingPolicy = .unbounded
    ) throws(AtomError) -> AsyncStream<A.Produced> {
        let (stream, continuation) = AsyncStream.makeStream(of: A.Produced.self, bufferingPolicy: bufferingPolicy)
        let added = try core.perform { (graph: AtomGraph) throws(AtomError) in
            // The first value is yielded inside the operation, before any
            // later one can be delivered.
            try graph.addWatcher(to: atom, in: self.scope, onUpdate: { continuation.yield($0) }) {
                continuation.yield($0)
            }
        }
        let subscription = AtomSubscription(core: core, node: added.node, watcher: added.watcher, initialValue: nil)
        continuation.onTermination = { _ in subscription.cancel() }
        return stream
    }

    /// Sets a state atom's value and recomputes what watches it. An atom
    /// that nothing watches (and not ``KeepAlive``) is released after the
    /// set, as after a read: its next read starts from its default.
    ///
    /// Called from inside an atom's computation, the set is applied after
    /// the update in progress, as an update of its own.
    /// - Throws: ``AtomError/storeClosed``; a cycle found while recomputing.
    public func set<A: StateAtom>(_ value: A.Value, for atom: A) throws(AtomError) {
        try core.perform { (graph: AtomGraph) throws(AtomError) in try graph.set(value, for: atom, in: self.scope) }
    }

    /// Changes a state atom's value in place, as ``set(_:for:)`` does.
    /// `body` runs inside the store's exclusion: keep it quick.
    public func modify<A: StateAtom>(_ atom: A, _ body: @escaping @Sendable (inout A.Value) -> Void) throws(AtomError) {
        try core.perform { (graph: AtomGraph) throws(AtomError) in try graph.modify(atom, in: self.scope, body) }
    }

    /// Computes `atom` again now — a state atom's default, a task atom's
    /// task (the old one is cancelled) — and recomputes what watches it.
    /// - Returns: the new value.
    @discardableResult
    public func refresh<A: Atom>(_ atom: A) throws(AtomError) -> A.Produced {
        try core.perform { (graph: AtomGraph) throws(AtomError) in try graph.refresh(atom, in: self.scope) }
    }

    /// Puts `atom` back to its first value: a state atom to its default;
    /// any other atom is computed again, as ``refresh(_:)`` does.
    public func reset<A: Atom>(_ atom: A) throws(AtomError) {
        _ = try refresh(atom)
    }

    /// Sends `event` to a spin atom's loop.
    /// - Returns: the loop's answer; `EmitResult.stopped` when the atom
    ///   is not in use (its loop is not running) or the store is closed.
    @discardableResult
    public func emit<A: SpinAtom>(_ event: A.Event, to atom: A) -> EmitResult {
        loop(of: atom)?.emit(event) ?? .stopped
    }

    /// The running loop of a spin atom in use, or nil.
    public func loop<A: SpinAtom>(of atom: A) -> SpinLoop<A.State, A.Event>? {
        let resource = try? core.perform { (graph: AtomGraph) throws(AtomError) in graph.resource(of: atom, in: self.scope) }
        return resource.flatMap({ $0 }) as? SpinLoop<A.State, A.Event>
    }

    /// The values of every atom in use.
    public func snapshot() throws(AtomError) -> AtomSnapshot {
        try core.perform { (graph: AtomGraph) throws(AtomError) in graph.makeSnapshot() }
    }

    /// Writes back the snapshot's state-atom values (those still in use)
    /// as one update; derived atoms are recomputed from them.
    public func restore(_ snapshot: AtomSnapshot) throws(AtomError) {
        try core.perform { (graph: AtomGraph) throws(AtomError) in graph.restore(snapshot) }
    }

    /// Releases every atom (terminations run, tasks are cancelled, loops
    /// stop with a drain) and refuses every later operation with
    /// ``AtomError/storeClosed``. Releasing the last reference to the store
    /// closes it too.
    public func close() {
        core.close()
    }
}
