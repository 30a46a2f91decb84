internal import CSpindle

/// What a ``NodeIndex`` indexes: an object that knows its key.
protocol IndexedByAtomKey: AnyObject {
    /// How many of the object's first bytes a lookup that found it starts
    /// loading, before its key is compared: what its finder reads next.
    static var prefetchedBytes: Int { get }
    var key: AtomKey { get }
    /// Whether `key` is the object's key (without copying its own).
    func hasKey(_ key: AtomKey) -> Bool
}

extension AnyAtomNode: IndexedByAtomKey {}

/// The store's nodes by key: an open-addressed table (linear probing)
/// whose slots hold a key's hash beside its node.
///
/// Finding a node reads one slot and then the node, whose key settles a
/// hash match. A `Dictionary` keeps its occupancy bitmap, keys and values
/// in three arrays: in a graph too big for the caches, a lookup missed
/// three times before it reached the node.
///
/// The table is at most half full, so a probe is short. A removal shifts
/// the slots after it back (no tombstones), so a lookup stops at the first
/// empty slot. The slot index comes from the key's hash mixed again
/// (`AtomKey._rawHashValue(seed:)`); the key's own hash is `Hasher`'s,
/// seeded per process, so keys made from outside input cannot be chosen
/// to collide.
///
/// It grows (doubling) and never shrinks, as a `Dictionary` does not on
/// removal: a store's table stays as large as its largest graph.
///
/// It holds a counted reference to every node it indexes. Not thread-safe:
/// the store's exclusion guards it (a member of `AtomGraph`).
struct NodeIndex<Node: IndexedByAtomKey>: ~Copyable {
    private struct Slot {
        /// The key's hash; meaningful while `node` is set.
        var hash: Int
        /// The node, retained by the table; nil: the slot is empty.
        var node: Unmanaged<Node>?
    }

    /// `mask + 1` slots, a power of two.
    private var slots: UnsafeMutablePointer<Slot>
    private var mask: Int
    /// The nodes indexed.
    private(set) var count = 0

    /// An empty index with room for `capacity / 2` nodes before it grows.
    ///
    /// - Parameter capacity: slots to start with, a power of two ≥ 2.
    init(capacity: Int = 64) {
        precondition(capacity >= 2 && capacity & (capacity - 1) == 0, "NodeIndex: a capacity of \(capacity)")
        slots = Self.emptySlots(capacity)
        mask = capacity - 1
    }

    deinit {
        for index in 0...mask { slots[index].node?.release() }
        slots.deallocate()
    }

    var isEmpty: Bool { count == 0 }

    /// The slot hash of `key`.
    static func hash(of key: AtomKey) -> Int { key._rawHashValue(seed: 0) }

    /// The node indexed under `key`, if any.
    ///
    /// - Complexity: O(1) on average.
    subscript(key: AtomKey) -> Node? {
        first(hash: Self.hash(of: key)) { $0.hasKey(key) }
    }

    /// The first node indexed under a key of slot hash `hash` for which
    /// `matches` is true.
    ///
    /// - Complexity: O(1) on average.
    @inline(__always)
    private func first(hash: Int, where matches: (Node) -> Bool) -> Node? {
        var index = hash & mask
        while let held = slots[index].node {
            // The key settles a hash match; the lines its finder reads
            // next start loading beside the key's (a set propagates from
            // the node at once), instead of after it.
            if slots[index].hash == hash {
                spindle_prefetch(held.toOpaque(), Node.prefetchedBytes)
                if held._withUnsafeGuaranteedRef(matches) { return held.takeUnretainedValue() }
            }
            index = (index &+ 1) & mask
        }
        return nil
    }

    /// Indexes `node` under `key`, which indexes no node yet.
    ///
    /// - Complexity: O(1) on average; O(`count`) when the table grows.
    mutating func insert(_ node: Node, for key: AtomKey) {
        assert(self[key] == nil, "NodeIndex: a second node for \(key)")
        if (count + 1) * 2 > mask + 1 { grow() }
        place(hash: Self.hash(of: key), node: .passRetained(node))
        count += 1
    }

    /// Removes `node`, indexed under `key`; a node not indexed (another
    /// node holds its key, or none does) leaves the index as it is.
    ///
    /// - Returns: whether `node` was indexed.
    /// - Complexity: O(1) on average.
    @discardableResult
    mutating func remove(_ node: Node, for key: AtomKey) -> Bool {
        let target = Unmanaged.passUnretained(node).toOpaque()
        var hole = Self.hash(of: key) & mask
        while true {
            guard let held = slots[hole].node else { return false }
            if held.toOpaque() == target { break }
            hole = (hole &+ 1) & mask
        }
        let removed = slots[hole].node!
        // Shift back every following slot of the run whose home is not
        // between the hole and itself: each stays reachable from its home
        // with no empty slot on the way.
        var next = (hole &+ 1) & mask
        while slots[next].node != nil {
            let home = slots[next].hash & mask
            if (next &- home) & mask >= (next &- hole) & mask {
                slots[hole] = slots[next]
                hole = next
            }
            next = (next &+ 1) & mask
        }
        slots[hole] = Slot(hash: 0, node: nil)
        count -= 1
        removed.release()
        return true
    }

    /// Calls `body` with every node, in no particular order; `body` must
    /// not change the index.
    func forEach(_ body: (Node) throws -> Void) rethrows {
        for index in 0...mask {
            if let held = slots[index].node { try body(held.takeUnretainedValue()) }
        }
    }

    /// Every node, in no particular order.
    var all: [Node] {
        var nodes: [Node] = []
        nodes.reserveCapacity(count)
        forEach { nodes.append($0) }
        return nodes
    }

    // MARK: Storage

    private static func emptySlots(_ capacity: Int) -> UnsafeMutablePointer<Slot> {
        let slots = UnsafeMutablePointer<Slot>.allocate(capacity: capacity)
        slots.initialize(repeating: Slot(hash: 0, node: nil), count: capacity)
        return slots
    }

    /// Puts a node in the first empty slot from its home (one exists: the
    /// table is at most half full).
    private mutating func place(hash: Int, node: Unmanaged<Node>) {
        var index = hash & mask
        while slots[index].node != nil { index = (index &+ 1) & mask }
        slots[index] = Slot(hash: hash, node: node)
    }

    private mutating func grow() {
        let old = slots
        let oldCapacity = mask + 1
        slots = Self.emptySlots(oldCapacity * 2)
        mask = oldCapacity * 2 - 1
        for index in 0..<oldCapacity {
            if let held = old[index].node { place(hash: old[index].hash, node: held) }
        }
        old.deallocate()
    }
}
