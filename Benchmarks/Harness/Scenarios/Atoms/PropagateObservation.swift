import Observation

/// `atoms-propagate` on Observation: the graph as `@Observable` models, a
/// source's value a stored property, its chains' atoms computed properties.
///
/// A watch is `withObservationTracking` over the watched property; its
/// `onChange` (called in the source's `willSet`, once, then the tracking
/// ends) marks it invalidated, and after each set every invalidated watch
/// reads its property again inside a new tracking, as a view re-renders:
/// the read is the watcher's update. A computed property caches nothing,
/// so each read evaluates the chain above it: the scenario's check expects
/// each derived property evaluated once per watched atom at or below it.
enum PropagateObservation {
    static func run(_ shape: PropagateShape, books: PropagateBooks) -> (elapsed: UInt64, allocations: AllocationCount?) {
        let models = (0..<shape.sources).map { _ in PropagateSourceModel() }
        var chains: [Int: PropagateChainModel] = [:]
        var watches: [PropagateObservedAtom] = []
        for atom in 0..<shape.atomCount where shape.watched[atom] {
            if atom < shape.derivedCount {
                let base = atom - atom % PropagateShape.depth
                let source = models[atom / PropagateShape.derivedPerSource]
                let chain = chains[base] ?? PropagateChainModel(source: source, base: Int32(base))
                chains[base] = chain
                watches.append(PropagateObservedAtom(
                    atom: Int32(atom), source: source, chain: chain, level: atom % PropagateShape.depth))
            } else {
                watches.append(PropagateObservedAtom(
                    atom: Int32(atom), source: models[atom - shape.derivedCount], chain: nil, level: -1))
            }
        }
        let tracker = Tracker(watches: watches)
        for watch in watches.indices { tracker.track(watch) }
        for source in 0..<shape.sources { tracker.set(models[source], to: source + 1) }
        books.resetCounts()
        Tracker.invalidations = 0
        var value = shape.sources
        let region = MeasuredRegion.begin()
        for source in shape.setSources {
            value &+= 1
            tracker.set(models[Int(source)], to: value)
        }
        let measured = region.end()
        precondition(Tracker.invalidations == books.updates, "every invalidation is followed by one read")
        return (measured.elapsedNanoseconds, measured.allocations)
    }

    /// Tracks the watches and registers each again after its change.
    ///
    /// `invalidated` and `invalidations`: the setting thread only (the
    /// `onChange` calls come from the source's `willSet`, in place).
    private struct Tracker {
        nonisolated(unsafe) static var invalidated: [Int32] = []
        nonisolated(unsafe) static var invalidations = 0

        let watches: [PropagateObservedAtom]
        private var pending: [Int32] = []

        init(watches: [PropagateObservedAtom]) {
            self.watches = watches
            Self.invalidated.removeAll()
            Self.invalidated.reserveCapacity(watches.count)
        }

        /// Reads watch `index`'s property in a new tracking: its update.
        func track(_ index: Int) {
            let watch = watches[index]
            let value = withObservationTracking {
                watch.read()
            } onChange: { [index = Int32(index)] in
                Tracker.invalidated.append(index)
                Tracker.invalidations &+= 1
            }
            PropagateBooks.delivered(watch.atom, value)
        }

        /// Sets a source, then reads again every watch it invalidated.
        func set(_ model: PropagateSourceModel, to value: Int) {
            model.value = value
            for index in Self.invalidated { track(Int(index)) }
            Self.invalidated.removeAll(keepingCapacity: true)
        }
    }
}

/// A source of `atoms-propagate` as an observable model.
@Observable final class PropagateSourceModel {
    var value = 0
}

/// A chain of `atoms-propagate` (source → a → b → c) as computed properties
/// of an observable model; each evaluation is counted in the run's books.
@Observable final class PropagateChainModel {
    @ObservationIgnored let source: PropagateSourceModel
    /// The number of the chain's first atom (`PropagateShape`).
    @ObservationIgnored let base: Int32

    init(source: PropagateSourceModel, base: Int32) {
        self.source = source
        self.base = base
    }

    var a: Int {
        PropagateBooks.recomputed(base)
        return source.value &* 3 &+ 1
    }

    var b: Int {
        PropagateBooks.recomputed(base + 1)
        return a &* 3 &+ 1
    }

    var c: Int {
        PropagateBooks.recomputed(base + 2)
        return b &* 3 &+ 1
    }
}

/// One watched atom of the observation engine: a source's value, or one
/// level of a chain.
struct PropagateObservedAtom {
    let atom: Int32
    let source: PropagateSourceModel
    let chain: PropagateChainModel?
    /// -1: the source itself; 0, 1, 2: a, b, c.
    let level: Int

    func read() -> Int {
        switch level {
        case 0: chain.unsafelyUnwrapped.a
        case 1: chain.unsafelyUnwrapped.b
        case 2: chain.unsafelyUnwrapped.c
        default: source.value
        }
    }
}
