/// A list of object references, the first in place and the others in a
/// raw buffer, for the node lists that the propagation goes through (a
/// node's dependencies, dependents and watchers). In place: most nodes
/// have one dependency, one dependent or one watcher, and reading it then
/// touches no other memory than the node's.
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
@usableFromInline
struct ReferenceList<Object: AnyObject> {
    /// Element 0, while `count > 0`.
    @usableFromInline var first: UnsafeRawPointer?
    /// Elements 1 ..< count, at `rest[index - 1]`.
    @usableFromInline var rest: UnsafeMutablePointer<UnsafeRawPointer>?
    private var restCapacity = 0
    @usableFromInline var count = 0

    @inlinable
    var isEmpty: Bool { count == 0 }

    @inlinable @inline(__always)
    func opaque(at index: Int) -> UnsafeRawPointer {
        index == 0 ? first.unsafelyUnwrapped : rest.unsafelyUnwrapped[index &- 1]
    }

    /// Writes element `index` (< count, or == count with room for it).
    @inline(__always)
    private mutating func setOpaque(_ pointer: UnsafeRawPointer, at index: Int) {
        if index == 0 {
            first = pointer
        } else {
            rest.unsafelyUnwrapped[index &- 1] = pointer
        }
    }

    /// The object at `index`, uncounted: valid while its owner keeps it.
    @inlinable @inline(__always)
    subscript(index: Int) -> Unmanaged<Object> {
        precondition(index >= 0 && index < count, "ReferenceList: index out of range")
        return .fromOpaque(opaque(at: index))
    }

    /// Calls `body` with each object, uncounted, in order.
    @inline(__always)
    func forEach(_ body: (Object) throws -> Void) rethrows {
        for index in 0..<count {
            try Unmanaged<Object>.fromOpaque(opaque(at: index))._withUnsafeGuaranteedRef { try body($0) }
        }
    }

    /// Whether `object` is in the list.
    func contains(_ object: Object) -> Bool {
        firstIndex(of: object) != nil
    }

    func firstIndex(of object: Object) -> Int? {
        let wanted = UnsafeRawPointer(Unmanaged.passUnretained(object).toOpaque())
        for index in 0..<count where opaque(at: index) == wanted { return index }
        return nil
    }

    /// Appends `object`, uncounted.
    mutating func append(_ object: Object) {
        if count > restCapacity { grow(to: Swift.max(restCapacity * 2, 4)) }
        setOpaque(UnsafeRawPointer(Unmanaged.passUnretained(object).toOpaque()), at: count)
        count &+= 1
    }

    /// Removes the last object (the list is not empty).
    @inline(__always)
    mutating func removeLast() -> Unmanaged<Object> {
        precondition(count > 0, "ReferenceList: removeLast of an empty list")
        count &-= 1
        return .fromOpaque(opaque(at: count))
    }

    /// Removes the object at `index`, putting the last one in its place
    /// (the order is not kept).
    mutating func swapRemove(at index: Int) {
        precondition(index >= 0 && index < count, "ReferenceList: index out of range")
        count &-= 1
        setOpaque(opaque(at: count), at: index)
    }

    /// Removes the object at `index`, keeping the order of the others.
    mutating func remove(at index: Int) {
        precondition(index >= 0 && index < count, "ReferenceList: index out of range")
        for later in (index &+ 1)..<count { setOpaque(opaque(at: later), at: later &- 1) }
        count &-= 1
    }

    /// Empties the list, keeping its buffer; releases nothing.
    mutating func removeAll() {
        count = 0
        first = nil
    }

    /// Makes the list `objects`, in order (uncounted), keeping the buffer
    /// when it is large enough.
    mutating func replace(with objects: ArraySlice<Object>) {
        if objects.count > restCapacity &+ 1 { grow(to: objects.count) }
        count = 0
        for object in objects {
            setOpaque(UnsafeRawPointer(Unmanaged.passUnretained(object).toOpaque()), at: count)
            count &+= 1
        }
    }

    /// Whether the list holds exactly `objects`, in order.
    func elementsEqual(_ objects: ArraySlice<Object>) -> Bool {
        guard objects.count == count else { return false }
        var index = 0
        for object in objects {
            if opaque(at: index) != UnsafeRawPointer(Unmanaged.passUnretained(object).toOpaque()) { return false }
            index &+= 1
        }
        return true
    }

    /// Releases every object (the owner gives its counted references back).
    func releaseAll() {
        for index in 0..<count { Unmanaged<Object>.fromOpaque(opaque(at: index)).release() }
    }

    /// The objects, counted, in a new array.
    var array: [Object] {
        (0..<count).map { Unmanaged<Object>.fromOpaque(opaque(at: $0)).takeUnretainedValue() }
    }

    /// Frees the buffer; the list is empty after it.
    mutating func deallocate() {
        rest?.deallocate()
        rest = nil
        restCapacity = 0
        removeAll()
    }

    /// Room for `capacity` elements in all (the first in place).
    private mutating func grow(to capacity: Int) {
        let newCapacity = capacity &- 1
        guard newCapacity > restCapacity else { return }
        let new = UnsafeMutablePointer<UnsafeRawPointer>.allocate(capacity: newCapacity)
        if let rest {
            new.moveInitialize(from: rest, count: Swift.max(count &- 1, 0))
            rest.deallocate()
        }
        rest = new
        restCapacity = newCapacity
    }
}
