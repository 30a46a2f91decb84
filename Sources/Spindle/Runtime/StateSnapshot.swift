internal import Atomics

/// The latest state, readable from any thread without a lock.
///
/// The state lives in boxes: a header (a count of the readers inside the
/// box, and the link to the next box) and then one `State`. `current`
/// points at the published box. The reducer thread
/// writes a state only into a box that is not current and that no reader
/// is inside, then publishes it with one atomic exchange; the box it
/// replaced becomes the spare for the next publish. Two boxes suffice
/// while readers come and go; a reader still inside the spare when the
/// next publish comes makes the reducer take another free box, or
/// allocate one, so publishing never waits for a reader. Publishing
/// allocates nothing in steady state and costs one exchange and one load.
///
/// One allocation holds the fields, the loop's running state (the one its
/// reducer mutates, see `runningState(as:)`) and the first two boxes, in
/// that order; a box added later is an allocation of its own. A request
/// through a loop per connection reduces and publishes: with a small
/// state, that touches two or three adjacent cache lines, not an object
/// for the snapshot, one per box and one for the running state.
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
/// A loop reaches it through `StateSnapshot<State>`, its typed handle
/// (below). The object itself is not generic: allocating an instance of a
/// generic class asks the runtime for its metadata (a hash-table lookup),
/// once per loop started. So the state's type is a parameter of each of
/// its methods, which must name the type `make` was given; they are
/// fileprivate, and the handle, made by `make` with that type, is the only
/// caller.
///
/// Thread safety: `value` from any thread; `publish` on the reducer thread
/// only (one at a time: the loop's scheduling orders its runners).
// Not `Sendable` (a `ManagedBuffer` cannot be): the loop that holds it is
// shared, and calls it as "Thread safety" says.
final class _UnsafeStateSnapshot: ManagedBuffer<StateSnapshotFields, UInt8> {
    /// A box's header; the state follows at `stateOffset`.
    private struct BoxHeader {
        var readers: Int.AtomicRepresentation
        var next: UnsafeMutableRawPointer?
    }

    /// A snapshot publishing `initial`, whose running state (see
    /// `runningState(as:)`) is `initial` too.
    fileprivate static func make<State>(_ initial: State) -> _UnsafeStateSnapshot {
        let layout = Layout(State.self)
        let buffer = create(minimumCapacity: layout.tailBytes) { buffer in
            // The states first (the elements exist before the header), so
            // that the fields start out pointing at the boxes.
            let slots = inlineSlots(of: buffer, layout)
            slots.running.initializeMemory(as: State.self, to: initial)
            initializeBox(slots.second, holding: initial, next: nil)
            initializeBox(slots.first, holding: initial, next: slots.second)
            return StateSnapshotFields(current: .init(slots.first), spare: slots.second,
                                       firstBox: slots.first, stateType: State.self)
        }
        return unsafeDowncast(buffer, to: _UnsafeStateSnapshot.self)
    }

    deinit {
        Self.destroy(self, holding: fields.pointee.stateType)
    }

    /// The latest published state. Any thread.
    fileprivate func value<State>(as type: State.Type) -> State {
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
    fileprivate func publish<State>(_ state: State) {
        let box: UnsafeMutableRawPointer
        if let free = freeSpare() ?? freeBox() {
            box = free
            Self.state(in: box, as: State.self).pointee = state
        } else {
            box = addBox(holding: state)
        }
        fields.pointee.spare = current.exchange(box, ordering: .sequentiallyConsistent)
    }

    /// The loop's running state, the one its reducer mutates (reducer
    /// thread only; the snapshot only holds it, next to its boxes, so a
    /// reduction and its publish touch one allocation). Valid while the
    /// snapshot lives; `State` must be the type `make` was given.
    fileprivate func runningState<State>(as type: State.Type) -> UnsafeMutablePointer<State> {
        Self.inlineSlots(of: self, Layout(State.self)).running.assumingMemoryBound(to: State.self)
    }

    /// How many boxes the snapshot holds (two, unless a publish found a
    /// reader inside the spare and had no other free box): for tests. Only
    /// while no publish runs (once the loop has stopped).
    var boxCount: Int {
        var count = 0
        var next: UnsafeMutableRawPointer? = fields.pointee.firstBox
        while let box = next {
            count += 1
            next = Self.header(of: box).pointee.next
        }
        return count
    }

    // MARK: Fields

    // The fields, in this object: the address outlives the closure, as
    // every caller holds the object.
    @inline(__always)
    private var fields: UnsafeMutablePointer<StateSnapshotFields> {
        withUnsafeMutablePointerToHeader { $0 }
    }

    // The current box, an atomic held in place in the fields (a
    // `ManagedAtomic` would be an object of its own per loop, which a
    // server with a loop per connection pays per connection).
    @inline(__always)
    private var current: UnsafeAtomic<UnsafeMutableRawPointer> {
        UnsafeAtomic(at: UnsafeMutableRawPointer(fields)
            .advanced(by: MemoryLayout<StateSnapshotFields>.offset(of: \.current).unsafelyUnwrapped)
            .assumingMemoryBound(to: UnsafeMutableRawPointer.AtomicRepresentation.self))
    }

    // The spare, if no reader is inside it. Reducer thread.
    @inline(__always)
    private func freeSpare() -> UnsafeMutableRawPointer? {
        guard let spare = fields.pointee.spare,
              Self.readers(of: spare).load(ordering: .sequentiallyConsistent) == 0 else { return nil }
        return spare
    }

    // A box other than the current one and the spare that no reader is
    // inside, nil if none (a reader is inside every one). Reducer thread.
    private func freeBox() -> UnsafeMutableRawPointer? {
        let published = current.load(ordering: .relaxed)
        let spare = fields.pointee.spare
        var candidate: UnsafeMutableRawPointer? = fields.pointee.firstBox
        while let box = candidate {
            if box != published, box != spare,
               Self.readers(of: box).load(ordering: .sequentiallyConsistent) == 0 {
                return box
            }
            candidate = Self.header(of: box).pointee.next
        }
        return nil
    }

    // A new box holding `state`, allocated on its own, first in the list:
    // a reader is inside every box. Reducer thread.
    private func addBox<State>(holding state: State) -> UnsafeMutableRawPointer {
        let layout = Layout(State.self)
        let box = UnsafeMutableRawPointer.allocate(byteCount: layout.boxStride, alignment: layout.alignment)
        Self.initializeBox(box, holding: state, next: fields.pointee.firstBox)
        fields.pointee.firstBox = box
        return box
    }

    // MARK: Layout

    /// Where the running state and the two first boxes sit in the tail
    /// elements (raw bytes), from its first address aligned for them both:
    /// the running state, then the boxes. Boxes added later are
    /// allocations of `boxStride` bytes.
    private struct Layout {
        let alignment: Int
        let stateOffset: Int
        let firstBoxOffset: Int
        let boxStride: Int
        var tailBytes: Int { alignment - 1 + firstBoxOffset + 2 * boxStride }

        @inline(__always)
        init<State>(_ type: State.Type) {
            alignment = max(MemoryLayout<BoxHeader>.alignment, MemoryLayout<State>.alignment)
            stateOffset = Self.aligned(MemoryLayout<BoxHeader>.size, to: MemoryLayout<State>.alignment)
            firstBoxOffset = Self.aligned(MemoryLayout<State>.size, to: alignment)
            boxStride = Self.aligned(stateOffset + MemoryLayout<State>.size, to: alignment)
        }

        @inline(__always)
        static func aligned(_ offset: Int, to alignment: Int) -> Int {
            (offset + alignment - 1) & ~(alignment - 1)
        }
    }

    // The running state's slot and the two first boxes, in the tail
    // elements. The address outlives the closure: the elements are part of
    // the buffer, which every caller holds.
    @inline(__always)
    private static func inlineSlots(of buffer: ManagedBuffer<StateSnapshotFields, UInt8>, _ layout: Layout)
        -> (running: UnsafeMutableRawPointer, first: UnsafeMutableRawPointer, second: UnsafeMutableRawPointer) {
        let running = UnsafeMutableRawPointer(buffer.withUnsafeMutablePointerToElements { $0 })
            .alignedUp(toMultipleOf: layout.alignment)
        let first = running + layout.firstBoxOffset
        return (running, first, first + layout.boxStride)
    }

    @inline(__always)
    private static func header(of box: UnsafeMutableRawPointer) -> UnsafeMutablePointer<BoxHeader> {
        box.assumingMemoryBound(to: BoxHeader.self)
    }

    @inline(__always)
    private static func readers(of box: UnsafeMutableRawPointer) -> UnsafeAtomic<Int> {
        UnsafeAtomic(at: UnsafeMutableRawPointer(header(of: box)).assumingMemoryBound(to: Int.AtomicRepresentation.self))
    }

    @inline(__always)
    private static func state<State>(in box: UnsafeMutableRawPointer, as type: State.Type) -> UnsafeMutablePointer<State> {
        (box + Layout(State.self).stateOffset).assumingMemoryBound(to: State.self)
    }

    private static func initializeBox<State>(_ box: UnsafeMutableRawPointer, holding state: State,
                                             next: UnsafeMutableRawPointer?) {
        box.bindMemory(to: BoxHeader.self, capacity: 1)
            .initialize(to: BoxHeader(readers: Int.AtomicRepresentation(0), next: next))
        Self.state(in: box, as: State.self).initialize(to: state)
    }

    // Opened from the fields' `stateType` (an implicitly opened existential):
    // destroys every state, and frees the boxes added after `make`.
    private static func destroy<State>(_ snapshot: _UnsafeStateSnapshot, holding type: State.Type) {
        let slots = inlineSlots(of: snapshot, Layout(State.self))
        var next: UnsafeMutableRawPointer? = snapshot.fields.pointee.firstBox
        while let box = next {
            next = header(of: box).pointee.next
            state(in: box, as: State.self).deinitialize(count: 1)
            _ = header(of: box).pointee.readers.dispose()
            if box != slots.first, box != slots.second { box.deallocate() }
        }
        slots.running.assumingMemoryBound(to: State.self).deinitialize(count: 1)
    }
}

/// An `_UnsafeStateSnapshot`'s fields, in its object before the states.
struct StateSnapshotFields {
    /// The published box (atomic: see `_UnsafeStateSnapshot.current`).
    var current: UnsafeMutableRawPointer.AtomicRepresentation
    /// Reducer thread only: the box replaced by the last publish.
    var spare: UnsafeMutableRawPointer?
    /// Reducer thread only: the first of all boxes, linked through their
    /// headers.
    var firstBox: UnsafeMutableRawPointer
    /// The type of every state held: deinit opens it to destroy them. A
    /// metatype, not a closure: a closure over `State` would cost a
    /// context allocation per loop started.
    let stateType: Any.Type
}

/// A loop's latest state, readable from any thread without a lock: the
/// typed handle of an `_UnsafeStateSnapshot`, made with the loop's `State`
/// and the only way to reach one, so no call can name another type.
/// Generic, but a value holding one reference: unspecialized code copies it
/// without asking for metadata, and its calls inline to the storage's.
///
/// Thread safety: as the storage's: `value()` from any thread; `publish`
/// and `runningState` on the reducer thread only.
struct StateSnapshot<State> {
    private let storage: _UnsafeStateSnapshot

    /// A snapshot publishing `initial`, whose running state is `initial` too.
    init(_ initial: State) {
        storage = .make(initial)
    }

    /// The latest published state. Any thread.
    @inline(__always)
    func value() -> State { storage.value(as: State.self) }

    /// Publishes `state`. Reducer thread only.
    @inline(__always)
    func publish(_ state: State) { storage.publish(state) }

    /// The loop's running state, the one its reducer mutates (reducer
    /// thread only). Valid while the snapshot lives.
    @inline(__always)
    var runningState: UnsafeMutablePointer<State> { storage.runningState(as: State.self) }

    /// How many boxes the snapshot holds (see `_UnsafeStateSnapshot`).
    var boxCount: Int { storage.boxCount }
}
