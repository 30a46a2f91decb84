/// A watch of one atom: it keeps the atom in use until it is cancelled or
/// released.
///
/// **Thread safety:** any thread; ``cancel()`` may be called more than once.
public final class AtomSubscription<Value: Sendable>: Sendable {
    /// Strong: the store (``AtomStore``) closes the core when it is
    /// released, whatever holds the core; a subscription outliving it
    /// finds it closed. Not weak: see `AtomUpdater.core`.
    private let core: StoreCore
    private let cancelWatch: @Sendable (AtomGraph) -> Void
    private let watcher: AtomWatcher<Value>
    /// The value the watch began with (nil for a ``AtomStore/values(of:bufferingPolicy:)``
    /// sequence, which yields it first).
    public let initialValue: Value!

    init<A: Atom>(core: StoreCore, node: NodeOf<A>, watcher: AtomWatcher<Value>, initialValue: Value?)
    where A.Produced == Value {
        self.core = core
        self.watcher = watcher
        self.initialValue = initialValue
        let guarded = GuardedNode(node: node)
        cancelWatch = { graph in graph.removeWatcher(watcher, from: guarded.node) }
    }

    /// Ends the watch: no call of its callback starts after it returns (one
    /// already running on the delivering thread finishes). The atom is
    /// released if nothing else uses it.
    public func cancel() {
        watcher.cancel()
        _ = try? core.perform { (graph: AtomGraph) throws(AtomError) in cancelWatch(graph) }
    }

    deinit {
        cancel()
    }
}
