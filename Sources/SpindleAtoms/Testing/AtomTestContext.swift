public import Spindle

/// A store of its own for one test: override atoms, watch and unwatch them,
/// and wait for the next update on a signal, never a clock.
///
/// Each context is hermetic: it shares nothing with other contexts or
/// stores, so tests run in parallel.
///
/// @Snippet(path: "Spindle/Snippets/SpindleAtoms/AtomsTesting", slice: "context")
///
/// **Thread safety:** any thread.
public final class AtomTestContext: Sendable {
    private let store: AtomStore
    /// The watches the context holds, by atom; and the waiters for updates.
    private let state = Lock<State>(State())

    private struct State {
        var watches: [AtomKey: any Sendable] = [:]
        var updates = 0
        var waiters: [(after: Int, continuation: CheckedContinuation<Void, Never>)] = []
        var onUpdate: (@Sendable () -> Void)?
    }

    /// Makes a context with an empty store of its own.
    public init() {
        store = AtomStore()
    }

    /// Called after each update of a watched atom (on the delivering thread).
    public var onUpdate: (@Sendable () -> Void)? {
        get { state.withLock { $0.onUpdate } }
        set { state.withLock { $0.onUpdate = newValue } }
    }

    /// How many updates of watched atoms the context has seen.
    public var updateCount: Int { state.withLock { $0.updates } }

    // MARK: Overrides and observers

    /// Overrides `atom` with `value`, for atoms made from now on (an atom
    /// in use keeps its value until it is released).
    public func override<A: Atom>(_ atom: A, with value: @escaping @Sendable (A) -> A.Produced) {
        configure { $0.addOverride(AtomOverride(atom, with: value)) }
    }

    /// Overrides every atom of `type`, for atoms made from now on.
    public func override<A: Atom>(_ type: A.Type, with value: @escaping @Sendable (A) -> A.Produced) {
        configure { $0.addOverride(AtomOverride(type, with: value)) }
    }

    /// Adds an observer of the context's store.
    public func observe(_ observer: any AtomObserver) {
        configure { $0.addObserver(observer) }
    }

    private func configure(_ body: @escaping (AtomGraph) -> Void) {
        _ = try? store.core.perform { (graph: AtomGraph) throws(AtomError) in body(graph) }
    }

    // MARK: Reading and writing

    /// Watches `atom` until ``unwatch(_:)``; each of its updates counts
    /// for ``waitForUpdate()``.
    /// - Returns: its value now.
    @discardableResult
    public func watch<A: Atom>(_ atom: A) throws(AtomError) -> A.Produced {
        let key = AtomKey(atom)
        if state.withLock({ $0.watches[key] != nil }) { return try store.read(atom) }
        let subscription = try store.watch(atom) { [weak self] _ in self?.updated() }
        state.withLock { $0.watches[key] = subscription }
        return subscription.initialValue
    }

    /// Stops watching `atom`: it is released if nothing else uses it.
    public func unwatch<A: Atom>(_ atom: A) {
        let subscription = state.withLock { $0.watches.removeValue(forKey: AtomKey(atom)) }
        (subscription as? AtomSubscription<A.Produced>)?.cancel()
    }

    /// The value of `atom`, without watching it.
    public func read<A: Atom>(_ atom: A) throws(AtomError) -> A.Produced { try store.read(atom) }

    /// Sets a state atom's value.
    public func set<A: StateAtom>(_ value: A.Value, for atom: A) throws(AtomError) { try store.set(value, for: atom) }

    /// Changes a state atom's value in place.
    public func modify<A: StateAtom>(_ atom: A, _ body: @escaping @Sendable (inout A.Value) -> Void) throws(AtomError) {
        try store.modify(atom, body)
    }

    /// Computes `atom` again; returns the new value.
    @discardableResult
    public func refresh<A: Atom>(_ atom: A) throws(AtomError) -> A.Produced { try store.refresh(atom) }

    /// Puts `atom` back to its first value.
    public func reset<A: Atom>(_ atom: A) throws(AtomError) { try store.reset(atom) }

    /// Sends `event` to a spin atom's loop.
    @discardableResult
    public func emit<A: SpinAtom>(_ event: A.Event, to atom: A) -> EmitResult { store.emit(event, to: atom) }

    /// The values of every atom in the context's store.
    public func snapshot() throws(AtomError) -> AtomSnapshot { try store.snapshot() }

    // MARK: Waiting

    /// Returns after the next update of a watched atom, one that comes after
    /// the call. For an update that work already started may cause before
    /// the call, read ``updateCount`` before starting it and wait with
    /// ``waitForUpdate(after:)``, or wait for a value with ``waitFor(_:until:)``.
    public func waitForUpdate() async {
        let after = state.withLock { $0.updates }
        await waitForUpdate(after: after)
    }

    /// Returns once `atom` — watched for the wait, if it is not — has a
    /// value that `condition` accepts, and returns that value.
    public func waitFor<A: Atom>(
        _ atom: A, until condition: @Sendable (A.Produced) -> Bool
    ) async throws(AtomError) -> A.Produced {
        let wasWatched = state.withLock { $0.watches[AtomKey(atom)] != nil }
        defer { if !wasWatched { unwatch(atom) } }
        var value = try watch(atom)
        while true {
            let after = state.withLock { $0.updates }
            value = try read(atom)
            if condition(value) { return value }
            await waitForUpdate(after: after)
        }
    }

    /// Returns once the context has seen more than `count` updates of
    /// watched atoms (at once, if it has).
    public func waitForUpdate(after count: Int) async {
        let after = count
        await withCheckedContinuation { continuation in
            let resumeNow = state.withLock { state in
                if state.updates > after { return true }
                state.waiters.append((after, continuation))
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    private func updated() {
        let (ready, onUpdate) = state.withLock { state in
            state.updates += 1
            let updates = state.updates
            let ready = state.waiters.filter { $0.after < updates }.map(\.continuation)
            state.waiters.removeAll { $0.after < updates }
            return (ready, state.onUpdate)
        }
        onUpdate?()
        for continuation in ready { continuation.resume() }
    }
}
