/// A growable first-in first-out buffer of `Element` in raw memory: a ring
/// whose capacity doubles when full.
///
/// Why not `Deque`: in the engine's unspecialized generic code every
/// `Deque<Event>` operation asks the runtime for generic metadata (see
/// CONTRIBUTING.md, "Generic code and specialization"). This type touches
/// `Element` only through its value witnesses, so it costs the same as the C
/// queues' payload handling.
///
/// Not thread-safe: the owner provides exclusion (the reducer thread, or a
/// lock). `package` and inlinable for the benchmark harness's baseline
/// queue, which is built on it in a module of its own and specialized there.
@usableFromInline
package struct RawFIFO<Element>: ~Copyable {
    @usableFromInline var storage: UnsafeMutablePointer<Element>
    @usableFromInline var capacity: Int  // a power of two
    @usableFromInline var head = 0
    @usableFromInline package private(set) var count = 0

    /// - Parameter capacity: elements to allocate room for now; 0 (the
    ///   default) allocates nothing until the first append, so an idle
    ///   loop's buffers cost nothing.
    @inlinable
    package init(capacity: Int = 0) {
        guard capacity > 0 else {
            self.capacity = 0
            storage = unallocated()
            return
        }
        var size = 1
        while size < capacity { size <<= 1 }
        self.capacity = size
        storage = .allocate(capacity: size)
    }

    @inlinable
    deinit {
        for index in 0..<count {
            (storage + ((head &+ index) & (capacity &- 1))).deinitialize(count: 1)
        }
        if capacity > 0 { storage.deallocate() }
    }

    @inlinable
    package var isEmpty: Bool { count == 0 }

    /// Appends `element` at the back.
    /// - Complexity: amortized O(1).
    @inlinable @inline(__always)
    package mutating func append(_ element: consuming Element) {
        if count == capacity { grow() }
        (storage + ((head &+ count) & (capacity &- 1))).initialize(to: element)
        count &+= 1
    }

    /// Appends a copy of each element of `elements`, in order.
    ///
    /// Indexes the buffer by address: a `for … in` over an
    /// `UnsafeBufferPointer<Element>` asks the runtime for its iterator's
    /// generic metadata on every call when `Element` is not known statically.
    /// - Complexity: amortized O(n).
    @inlinable
    package mutating func append(copying elements: UnsafeBufferPointer<Element>) {
        guard let base = elements.baseAddress else { return }
        for index in 0..<elements.count { append((base + index).pointee) }
    }

    /// Removes and returns the front element.
    /// - Precondition: not empty.
    /// - Complexity: O(1).
    @inlinable @inline(__always)
    package mutating func removeFirst() -> Element {
        assert(count > 0, "RawFIFO.removeFirst on an empty buffer")
        let element = (storage + head).move()
        head = (head &+ 1) & (capacity &- 1)
        count &-= 1
        return element
    }

    /// Removes the front element by handing its address to `body`, which
    /// must move (or deinitialize) it.
    /// - Precondition: not empty.
    /// - Complexity: O(1).
    @inlinable @inline(__always)
    package mutating func removeFirst(movingWith body: (UnsafeMutableRawPointer) -> Void) {
        assert(count > 0, "RawFIFO.removeFirst on an empty buffer")
        let element = storage + head
        head = (head &+ 1) & (capacity &- 1)
        count &-= 1
        body(UnsafeMutableRawPointer(element))
    }

    /// Deinitializes every element, keeping the capacity.
    /// - Complexity: O(n).
    @inlinable
    package mutating func removeAll() {
        while count > 0 { _ = removeFirst() }
        head = 0
    }

    /// Swaps contents with `other` in O(1) (a batch drain: the benchmark's baseline queue).
    @inlinable
    package mutating func exchange(with other: inout RawFIFO<Element>) {
        let (s, c, h, n) = (storage, capacity, head, count)
        (storage, capacity, head, count) = (other.storage, other.capacity, other.head, other.count)
        (other.storage, other.capacity, other.head, other.count) = (s, c, h, n)
    }

    @inlinable
    mutating func grow() {
        let newCapacity = capacity == 0 ? 16 : capacity * 2
        let newStorage = UnsafeMutablePointer<Element>.allocate(capacity: newCapacity)
        for index in 0..<count {
            (newStorage + index).moveInitialize(from: storage + ((head &+ index) & (capacity &- 1)), count: 1)
        }
        if capacity > 0 { storage.deallocate() }
        storage = newStorage
        capacity = newCapacity
        head = 0
    }
}

/// A growable contiguous array of `Element` in raw memory: the states of the
/// current batch, handed to feedbacks and observers as a buffer pointer.
/// Same reason as ``RawFIFO`` for not using `Array`.
///
/// Not thread-safe: reducer thread only.
struct RawBatch<Element>: ~Copyable {
    private var storage: UnsafeMutablePointer<Element>
    private var capacity: Int
    private(set) var count = 0

    /// - Parameter capacity: room to allocate now; 0 (the default)
    ///   allocates on the first append.
    init(capacity: Int = 0) {
        self.capacity = Swift.max(capacity, 0)
        storage = self.capacity > 0 ? .allocate(capacity: self.capacity) : unallocated()
    }

    deinit {
        storage.deinitialize(count: count)
        if capacity > 0 { storage.deallocate() }
    }

    /// Appends a copy of `element`.
    /// - Complexity: amortized O(1).
    @inline(__always)
    mutating func append(_ element: Element) {
        if count == capacity {
            let newCapacity = capacity == 0 ? 16 : capacity * 2
            let newStorage = UnsafeMutablePointer<Element>.allocate(capacity: newCapacity)
            newStorage.moveInitialize(from: storage, count: count)
            if capacity > 0 { storage.deallocate() }
            storage = newStorage
            capacity = newCapacity
        }
        (storage + count).initialize(to: element)
        count &+= 1
    }

    /// The elements, valid until the next mutation.
    var elements: UnsafeBufferPointer<Element> { UnsafeBufferPointer(start: storage, count: count) }

    /// Deinitializes every element, keeping the capacity.
    mutating func removeAll() {
        storage.deinitialize(count: count)
        count = 0
    }
}

// A RawFIFO uniquely owns its memory (it is noncopyable), so moving one to
// another thread moves the elements with it: Sendable when they are.
extension RawFIFO: @unchecked Sendable where Element: Sendable {}

/// A non-null placeholder for a buffer of capacity 0: never dereferenced
/// (every access is guarded by a count of 0) and never deallocated.
@inlinable @inline(__always)
func unallocated<Element>() -> UnsafeMutablePointer<Element> {
    UnsafeMutablePointer(bitPattern: MemoryLayout<Element>.alignment)!
}
