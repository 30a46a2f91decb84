/// A list of object references in a raw buffer, for the node lists that
/// the propagation goes through (a node's dependencies, dependents and
/// watchers).
///
/// Not an array: reading an array stored in a class retains its buffer
/// (the class could change the array during the read), and reading an
/// element retains the element; here neither happens. The list does not
/// count its references: each owner says who keeps the objects alive, and
/// retains them itself where it owns them and gives them back with
/// ``releaseAll()``.
///
/// The owner frees the buffer (``deallocate()``) in its `deinit`; the
/// list is never copied while another copy changes it (each is one
/// class's stored property, used under the store's exclusion).
struct ReferenceList<Object: AnyObject> {
    private var base: UnsafeMutablePointer<Unmanaged<Object>>?
    private(set) var count = 0
    private var capacity = 0

    var isEmpty: Bool { count == 0 }

    /// The object at `index`, uncounted: valid while its owner keeps it.
    @inline(__always)
    subscript(index: Int) -> Unmanaged<Object> {
        precondition(index >= 0 && index < count, "ReferenceList: index out of range")
        return base.unsafelyUnwrapped[index]
    }

    /// Calls `body` with each object, uncounted, in order.
    @inline(__always)
    func forEach(_ body: (Object) throws -> Void) rethrows {
        guard let base else { return }
        for index in 0..<count {
            try base[index]._withUnsafeGuaranteedRef { try body($0) }
        }
    }

    /// Whether `object` is in the list.
    func contains(_ object: Object) -> Bool {
        firstIndex(of: object) != nil
    }

    func firstIndex(of object: Object) -> Int? {
        guard let base else { return nil }
        for index in 0..<count where base[index].toOpaque() == Unmanaged.passUnretained(object).toOpaque() {
            return index
        }
        return nil
    }

    /// Appends `object`, uncounted.
    mutating func append(_ object: Object) {
        if count == capacity { grow(to: Swift.max(capacity * 2, 4)) }
        (base.unsafelyUnwrapped + count).initialize(to: .passUnretained(object))
        count &+= 1
    }

    /// Removes the object at `index`, putting the last one in its place
    /// (the order is not kept).
    mutating func swapRemove(at index: Int) {
        precondition(index >= 0 && index < count, "ReferenceList: index out of range")
        count &-= 1
        base.unsafelyUnwrapped[index] = base.unsafelyUnwrapped[count]
    }

    /// Removes the object at `index`, keeping the order of the others.
    mutating func remove(at index: Int) {
        precondition(index >= 0 && index < count, "ReferenceList: index out of range")
        let base = base.unsafelyUnwrapped
        (base + index).update(from: base + index + 1, count: count - index - 1)
        count &-= 1
    }

    /// Empties the list, keeping its buffer; releases nothing.
    mutating func removeAll() {
        count = 0
    }

    /// Makes the list `objects`, in order (uncounted), keeping the buffer
    /// when it is large enough.
    mutating func replace(with objects: ArraySlice<Object>) {
        if objects.count > capacity { grow(to: objects.count) }
        count = 0
        for object in objects {
            (base.unsafelyUnwrapped + count).initialize(to: .passUnretained(object))
            count &+= 1
        }
    }

    /// Whether the list holds exactly `objects`, in order.
    func elementsEqual(_ objects: ArraySlice<Object>) -> Bool {
        guard objects.count == count else { return false }
        var index = 0
        for object in objects {
            if base.unsafelyUnwrapped[index].toOpaque() != Unmanaged.passUnretained(object).toOpaque() { return false }
            index &+= 1
        }
        return true
    }

    /// Releases every object (the owner gives its counted references back).
    func releaseAll() {
        for index in 0..<count { base.unsafelyUnwrapped[index].release() }
    }

    /// The objects, counted, in a new array.
    var array: [Object] {
        (0..<count).map { base.unsafelyUnwrapped[$0].takeUnretainedValue() }
    }

    /// Frees the buffer; the list is empty after it.
    mutating func deallocate() {
        base?.deallocate()
        base = nil
        count = 0
        capacity = 0
    }

    private mutating func grow(to newCapacity: Int) {
        let new = UnsafeMutablePointer<Unmanaged<Object>>.allocate(capacity: newCapacity)
        if let base {
            new.moveInitialize(from: base, count: count)
            base.deallocate()
        }
        base = new
        capacity = newCapacity
    }
}
