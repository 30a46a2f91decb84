/// The propagation's queue: the nodes to recompute, one list per height,
/// each uncounted (a node is released only when an operation finishes,
/// after its propagation emptied every bucket).
///
/// Raw storage, not an array of arrays: each change of an array nested in an
/// array checks both for uniqueness. The lists keep their buffers for the
/// next propagation. The graph, which owns the one instance, frees it
/// (``deallocate()``) in its `deinit`.
struct HeightBuckets {
    private var lists: UnsafeMutablePointer<ReferenceList<AnyAtomNode>>?
    /// Lists 0 ..< listCount are initialized.
    private var listCount = 0

    /// Queues `node` at `height`.
    mutating func append(_ node: AnyAtomNode, at height: Int) {
        if height >= listCount { grow(toHold: height) }
        lists.unsafelyUnwrapped[height].append(node)
    }

    /// Whether the list of `height` is empty (a height past every list's is).
    func isEmpty(at height: Int) -> Bool {
        height >= listCount || lists.unsafelyUnwrapped[height].isEmpty
    }

    /// Takes the last node queued at `height`, which is not empty.
    mutating func removeLast(at height: Int) -> Unmanaged<AnyAtomNode> {
        lists.unsafelyUnwrapped[height].removeLast()
    }

    /// The node that `removeLast(at:)` takes next at `height`, if any.
    func peekLast(at height: Int) -> Unmanaged<AnyAtomNode>? {
        guard height < listCount else { return nil }
        let list = lists.unsafelyUnwrapped[height]
        return list.isEmpty ? nil : list[list.count &- 1]
    }

    /// Frees every list.
    mutating func deallocate() {
        guard let lists else { return }
        for height in 0..<listCount { lists[height].deallocate() }
        lists.deinitialize(count: listCount)
        lists.deallocate()
        self.lists = nil
        listCount = 0
    }

    private mutating func grow(toHold height: Int) {
        let newCount = Swift.max(height &+ 1, listCount * 2, 8)
        let new = UnsafeMutablePointer<ReferenceList<AnyAtomNode>>.allocate(capacity: newCount)
        if let lists {
            new.moveInitialize(from: lists, count: listCount)
            lists.deallocate()
        }
        (new + listCount).initialize(repeating: ReferenceList(), count: newCount &- listCount)
        lists = new
        listCount = newCount
    }
}
