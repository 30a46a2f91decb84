internal import Atomics

/// The latest state, readable from any thread without a lock.
///
/// The state lives in boxes: one allocation each, a header (a count of the
/// readers inside the box, and the link to the next box) and then one
/// `State`. `current` points at the published box. The reducer thread
/// writes a state only into a box that is not current and that no reader
/// is inside, then publishes it with one atomic exchange; the box it
/// replaced becomes the spare for the next publish. Two boxes suffice
/// while readers come and go; a reader still inside the spare when the
/// next publish comes makes the reducer take another free box, or
/// allocate one, so publishing never waits for a reader. Publishing
/// allocates nothing in steady state and costs one exchange and one load.
///
/// A reader enters the box it loaded (increments its count), then checks
/// that the box is still current before it copies the state, and leaves
/// (decrements) after: a box it entered after the reducer found it empty
/// is not current until the reducer has finished writing it and published
/// it. The increment and the reducer's exchange are sequentially
/// consistent, and so are the re-check and the reducer's load of the count
/// (a Dekker pair): either the reader's re-check sees the box replaced, or
/// the reducer's load sees the reader inside. A reader retries only when
/// the reducer published in between (lock-free).
///
/// Not generic: allocating an instance of a generic class asks the runtime
/// for its metadata (a hash-table lookup), once per loop started; the
/// state's type is a parameter of each method instead, and every call for
/// one snapshot must name the type its `init` was given.
///
/// Thread safety: `value` from any thread; `publish` on the reducer thread
/// only (one at a time: the loop's scheduling orders its runners).
final class StateSnapshot: Sendable {
    // The current box, as an atomic held in place: the first stored
    // property, reached only through `current` (its address, found as
    // swift-atomics' own `ManagedAtomic` finds its storage). A
    // `ManagedAtomic` would be an object of its own per loop, which a
    // server with a loop per connection pays per connection.
    nonisolated(unsafe) private var currentStorage: UnsafeMutableRawPointer.AtomicRepresentation
    // Reducer thread only: the box replaced by the last publish, and the
    // first of all boxes (linked through their headers; freed in deinit).
    nonisolated(unsafe) private var spare: UnsafeMutableRawPointer?
    nonisolated(unsafe) private var firstBox: UnsafeMutableRawPointer
    /// The type of the value in every box: deinit opens it to destroy the
    /// values. A metatype, not a closure: a closure over `State` would cost
    /// a context allocation per loop started.
    private let stateType: Any.Type

    /// A box's header; the state follows at `stateOffset`.
    private struct Header {
        var readers: Int.AtomicRepresentation
        var next: UnsafeMutableRawPointer?
    }

    @inline(__always)
    private var current: UnsafeAtomic<UnsafeMutableRawPointer> {
        UnsafeAtomic(at: _getUnsafePointerToStoredProperties(self)
            .assumingMemoryBound(to: UnsafeMutableRawPointer.AtomicRepresentation.self))
    }

    init<State>(_ initial: State) {
        let box = Self.allocateBox(holding: initial, next: nil)
        currentStorage = UnsafeMutableRawPointer.AtomicRepresentation(box)
        firstBox = box
        stateType = State.self
    }

    deinit {
        Self.destroyBoxes(from: firstBox, holding: stateType)
    }

    /// The latest published state. Any thread.
    func value<State>(as type: State.Type) -> State {
        while true {
            let box = current.load(ordering: .sequentiallyConsistent)
            let readers = Self.readers(of: box)
            readers.wrappingIncrement(ordering: .sequentiallyConsistent)
            if current.load(ordering: .sequentiallyConsistent) == box {
                let value = Self.state(in: box, as: State.self).pointee
                readers.wrappingDecrement(ordering: .releasing)
                return value
            }
            // Replaced since the load: the reducer may be writing it.
            readers.wrappingDecrement(ordering: .releasing)
        }
    }

    /// Publishes `state`. Reducer thread only.
    func publish<State>(_ state: State) {
        let box: UnsafeMutableRawPointer
        if let free = freeSpare() ?? freeBox() {
            box = free
            Self.state(in: box, as: State.self).pointee = state
        } else {
            box = addBox(holding: state)
        }
        spare = current.exchange(box, ordering: .sequentiallyConsistent)
    }

    /// How many boxes the snapshot holds (two, unless a publish found a
    /// reader inside the spare and had no other free box): for tests. Only
    /// while no publish runs (once the loop has stopped).
    var boxCount: Int {
        var count = 0
        var next: UnsafeMutableRawPointer? = firstBox
        while let box = next {
            count += 1
            next = Self.header(of: box).pointee.next
        }
        return count
    }

    // The spare, if no reader is inside it. Reducer thread.
    @inline(__always)
    private func freeSpare() -> UnsafeMutableRawPointer? {
        guard let spare, Self.readers(of: spare).load(ordering: .sequentiallyConsistent) == 0 else { return nil }
        return spare
    }

    // A box other than the current one and the spare that no reader is
    // inside, nil if none (a reader is inside every one). Reducer thread.
    private func freeBox() -> UnsafeMutableRawPointer? {
        let published = current.load(ordering: .relaxed)
        var candidate: UnsafeMutableRawPointer? = firstBox
        while let box = candidate {
            if box != published, box != spare,
               Self.readers(of: box).load(ordering: .sequentiallyConsistent) == 0 {
                return box
            }
            candidate = Self.header(of: box).pointee.next
        }
        return nil
    }

    // A new box holding `state`, first in the list: every box is entered
    // by a reader. Reducer thread.
    private func addBox<State>(holding state: State) -> UnsafeMutableRawPointer {
        let box = Self.allocateBox(holding: state, next: firstBox)
        firstBox = box
        return box
    }

    // MARK: Box layout

    @inline(__always)
    private static func stateOffset<State>(_ type: State.Type) -> Int {
        let alignment = MemoryLayout<State>.alignment
        return (MemoryLayout<Header>.size + alignment - 1) & ~(alignment - 1)
    }

    @inline(__always)
    private static func header(of box: UnsafeMutableRawPointer) -> UnsafeMutablePointer<Header> {
        box.assumingMemoryBound(to: Header.self)
    }

    @inline(__always)
    private static func readers(of box: UnsafeMutableRawPointer) -> UnsafeAtomic<Int> {
        UnsafeAtomic(at: UnsafeMutableRawPointer(header(of: box)).assumingMemoryBound(to: Int.AtomicRepresentation.self))
    }

    @inline(__always)
    private static func state<State>(in box: UnsafeMutableRawPointer, as type: State.Type) -> UnsafeMutablePointer<State> {
        (box + stateOffset(State.self)).assumingMemoryBound(to: State.self)
    }

    private static func allocateBox<State>(holding state: State, next: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer {
        let box = UnsafeMutableRawPointer.allocate(
            byteCount: stateOffset(State.self) + MemoryLayout<State>.size,
            alignment: max(MemoryLayout<Header>.alignment, MemoryLayout<State>.alignment))
        header(of: box).initialize(to: Header(readers: Int.AtomicRepresentation(0), next: next))
        Self.state(in: box, as: State.self).initialize(to: state)
        return box
    }

    // Opened from the snapshot's `stateType` (an implicitly opened existential).
    private static func destroyBoxes<State>(from first: UnsafeMutableRawPointer, holding type: State.Type) {
        var next: UnsafeMutableRawPointer? = first
        while let box = next {
            next = header(of: box).pointee.next
            state(in: box, as: State.self).deinitialize(count: 1)
            _ = header(of: box).pointee.readers.dispose()
            box.deallocate()
        }
    }
}
