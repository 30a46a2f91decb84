import SpindleAtoms

/// `atoms-propagate`: random single-atom sets in a graph of 100,000 atoms
/// (`PropagateShape`: 1,000 sources, each with 33 chains of three derived
/// atoms, 10 % of all atoms watched), on the store and on the same graph
/// in plain OpenCombine and in Observation.
///
/// Set-up, not timed: the graph is built and its watches made, then every
/// source is set once (the pre-pass), so that the buffers a propagation
/// reuses have their size before the clock starts (steady state). Clock:
/// the N sets, each returning with every watcher told. Rate: sets/s.
/// Checked after each run, or the run fails: each derived atom recomputed
/// exactly as the graph says (an atom in use once per set of its source,
/// every other atom never; Observation's computed properties once per
/// watched atom at or below them), the watchers' updates, and the last
/// value each watched atom saw.
enum AtomsPropagateScenario {
    static let scenario = Scenario(
        name: "atoms-propagate",
        producers: 1,
        description: """
            A graph of 100,000 atoms (10,000 with --quick): 1,000 state atoms, each with 33 \
            chains of three derived atoms (source → a → b → c), 10 % of all atoms watched; N \
            random single-atom sets (seeded) on one thread. Engines: atoms (AtomStore), \
            combine (OpenCombine: a CurrentValueSubject per source, map + removeDuplicates, \
            multicast where two consume, sinks), observation (@Observable models, computed \
            properties, withObservationTracking registered again after each change). Not \
            timed: building, watching, one set per source. Clock: the N sets. Rate: sets/s. \
            Checked: each derived atom recomputed as the graph says, every update delivered, \
            the watched atoms' last values. Figures: recomputations and watcher updates per set.
            """,
        defaultEvents: 200_000,
        quickEvents: 2_000,
        engines: AtomsEngines.available([.atoms, .combine, .observation]),
        yardstick: AtomsEngines.combineYardstick,
        measure: measure)

    /// Sources in a full run and under `--quick`.
    static let sources = 1_000
    static let quickSources = 100

    private static func measure(_ run: ScenarioRun) async throws -> Sample {
        let shape = PropagateShape(sources: run.quick ? quickSources : sources, sets: run.events)
        let books = PropagateBooks(derived: shape.derivedCount, atoms: shape.atomCount)
        PropagateBooks.current = books
        defer {
            PropagateBooks.current = .empty
            books.deallocate()
        }
        let measured: (elapsed: UInt64, allocations: AllocationCount?)
        switch run.engine {
        case .atoms: measured = try runAtoms(shape, books: books)
        case .combine:
            #if canImport(Combine) || canImport(OpenCombine)
            measured = PropagateCombine.run(shape, books: books)
            #else
            throw BenchmarkFailure(scenario: run.scenario, engine: run.engine.rawValue, message: AtomsEngines.noCombine)
            #endif
        case .observation: measured = PropagateObservation.run(shape, books: books)
        default: preconditionFailure("atoms-propagate has no engine \(run.engine)")
        }
        try shape.check(books, perDependent: run.engine != .observation, in: run)
        let sets = shape.setSources.count
        let recomputations = Int(books.recomputations.reduce(UInt64(0)) { $0 + UInt64($1) })
        return Sample(
            events: sets, elapsedNanoseconds: measured.elapsed, allocations: measured.allocations,
            counters: [
                "atoms": shape.atomCount,
                "watched": shape.watchedCount,
                "recomputations": recomputations,
                "watcher_updates": books.updates,
            ],
            figures: [
                "recomputations_per_set": Double(recomputations) / Double(max(sets, 1)),
                "watcher_updates_per_set": Double(books.updates) / Double(max(sets, 1)),
            ])
    }

    /// The store: a watch per watched atom; its ancestors come into use
    /// through it.
    private static func runAtoms(
        _ shape: PropagateShape, books: PropagateBooks
    ) throws -> (elapsed: UInt64, allocations: AllocationCount?) {
        let store = AtomStore()
        var subscriptions: [AtomSubscription<Int>] = []
        subscriptions.reserveCapacity(shape.watchedCount)
        for atom in 0..<shape.atomCount where shape.watched[atom] {
            let index = Int32(atom)
            if atom < shape.derivedCount {
                subscriptions.append(try store.watch(PropagateDerived(index: index)) { PropagateBooks.delivered(index, $0) })
            } else {
                let source = PropagateSource(id: Int32(atom - shape.derivedCount))
                subscriptions.append(try store.watch(source) { PropagateBooks.delivered(index, $0) })
            }
        }
        for source in 0..<shape.sources {
            try store.set(source + 1, for: PropagateSource(id: Int32(source)))
        }
        books.resetCounts()
        var value = shape.sources
        let region = MeasuredRegion.begin()
        for source in shape.setSources {
            value &+= 1
            try store.set(value, for: PropagateSource(id: source))
        }
        let measured = region.end()
        for subscription in subscriptions { subscription.cancel() }
        store.close()
        return (measured.elapsedNanoseconds, measured.allocations)
    }
}

/// A source of `atoms-propagate`: a state atom keyed by its number.
struct PropagateSource: StateAtom, Hashable {
    let id: Int32
    func defaultValue(context: Context) -> Int { 0 }
}

/// A derived atom of `atoms-propagate`, keyed by its number (see
/// `PropagateShape`): its parent's value × 3 + 1. Counts its computations
/// in the run's books.
struct PropagateDerived: ValueAtom, Hashable {
    let index: Int32

    func value(context: Context) throws(AtomError) -> Int {
        PropagateBooks.recomputed(index)
        let parent = index % Int32(PropagateShape.depth) == 0
            ? try context.watch(PropagateSource(id: index / Int32(PropagateShape.derivedPerSource)))
            : try context.watch(PropagateDerived(index: index - 1))
        return parent &* 3 &+ 1
    }
}
