import SpindleAtoms

/// `atoms-diamond`: one state atom, 1,000 derived atoms that each watch it
/// (a middle: its value is the source's), and one bottom atom that watches
/// all 1,000 and sums them, watched. N sets of the source, each writing a
/// value it never had (1, 2, 3, …).
///
/// A glitch is a bottom value the bottom's watcher sees that is not
/// 1,000 × the value being set: a sum of middles some of which still hold
/// the old value. Clock: the N sets, each returning with the bottom's
/// watcher told. Rate: sets/s. Counters: `glitches`, and the bottom's and
/// the middles' recomputations per set. The store must recompute the
/// bottom once and each middle once per set, and show no glitch, or the run
/// fails; OpenCombine's `combineLatest` emits once per middle that changes,
/// so its bottom sees 999 mixed values per set by design, counted, not
/// failed. Every engine's bottom must end on 1,000 × the last value.
enum AtomsDiamondScenario {
    static let width = 1_000
    /// The value of the one set made before the clock (the source starts
    /// at 0, and a set of an equal value would not propagate).
    static let warmUpValue = -1

    static let scenario = Scenario(
        name: "atoms-diamond",
        producers: 1,
        description: """
            One state atom, 1,000 derived atoms each equal to it, one watched bottom atom \
            summing all 1,000; N sets of the source (1, 2, 3, …). Engines: atoms, combine \
            (OpenCombine: 1,000 maps of a CurrentValueSubject summed by a balanced tree of \
            combineLatest pairs, a sink; OpenCombine has no combineLatest, so the harness \
            carries one). Clock: the N sets. Rate: sets/s. Counter glitches: bottom \
            values other than 1,000 × the value set (atoms must show none, and recompute the \
            bottom once per set; Combine's combineLatest glitches by design).
            """,
        defaultEvents: 5_000,
        quickEvents: 200,
        engines: AtomsEngines.available([.atoms, .combine]),
        yardstick: AtomsEngines.combineYardstick,
        measure: measure)

    /// What the bottom's watcher and the computations record. The setting
    /// thread only (propagation and delivery are synchronous in an
    /// uncontended `set`, and Combine's `send` calls out in place).
    struct Books {
        nonisolated(unsafe) static var settingValue = 0
        nonisolated(unsafe) static var lastBottom = 0
        nonisolated(unsafe) static var glitches = 0
        nonisolated(unsafe) static var bottomUpdates = 0
        nonisolated(unsafe) static var bottomRecomputations = 0
        nonisolated(unsafe) static var middleRecomputations = 0

        static func reset() {
            glitches = 0
            bottomUpdates = 0
            bottomRecomputations = 0
            middleRecomputations = 0
        }

        @inline(__always)
        static func bottomSaw(_ value: Int) {
            lastBottom = value
            bottomUpdates &+= 1
            if value != width &* settingValue { glitches &+= 1 }
        }
    }

    private static func measure(_ run: ScenarioRun) async throws -> Sample {
        let sets = run.events
        Books.settingValue = 0
        Books.lastBottom = -1
        let measured: (elapsed: UInt64, allocations: AllocationCount?)
        switch run.engine {
        case .atoms: measured = try runAtoms(sets: sets)
        case .combine:
            #if canImport(Combine) || canImport(OpenCombine)
            measured = DiamondCombine.run(sets: sets)
            #else
            throw BenchmarkFailure(scenario: run.scenario, engine: run.engine.rawValue, message: AtomsEngines.noCombine)
            #endif
        default: preconditionFailure("atoms-diamond has no engine \(run.engine)")
        }
        try expect(Books.lastBottom == width * sets,
                   "the bottom ended on \(Books.lastBottom), expected \(width * sets)", in: run)
        try expect(Books.middleRecomputations == width * sets,
                   "the middles recomputed \(Books.middleRecomputations) times, expected \(width * sets)", in: run)
        if run.engine == .atoms {
            try expect(Books.glitches == 0, "the bottom's watcher saw \(Books.glitches) mixed values", in: run)
            try expect(Books.bottomRecomputations == sets,
                       "the bottom recomputed \(Books.bottomRecomputations) times in \(sets) sets", in: run)
            try expect(Books.bottomUpdates == sets,
                       "the bottom's watcher had \(Books.bottomUpdates) updates in \(sets) sets", in: run)
        }
        return Sample(
            events: sets, elapsedNanoseconds: measured.elapsed, allocations: measured.allocations,
            counters: [
                "glitches": Books.glitches,
                "bottom_updates": Books.bottomUpdates,
                "bottom_recomputations": Books.bottomRecomputations,
            ],
            figures: [
                "glitches_per_set": Double(Books.glitches) / Double(max(sets, 1)),
                "bottom_recomputations_per_set": Double(Books.bottomRecomputations) / Double(max(sets, 1)),
                "middle_recomputations_per_set": Double(Books.middleRecomputations) / Double(max(sets, 1)),
            ])
    }

    private static func runAtoms(sets: Int) throws -> (elapsed: UInt64, allocations: AllocationCount?) {
        let store = AtomStore()
        let subscription = try store.watch(DiamondBottom()) { Books.bottomSaw($0) }
        // One set before the clock, so the buffers the propagation reuses
        // have their size (steady state); not counted.
        Books.settingValue = warmUpValue
        try store.set(warmUpValue, for: DiamondSource())
        Books.reset()
        let region = MeasuredRegion.begin()
        for value in 1...max(sets, 1) {
            Books.settingValue = value
            try store.set(value, for: DiamondSource())
        }
        let measured = region.end()
        subscription.cancel()
        store.close()
        return (measured.elapsedNanoseconds, measured.allocations)
    }
}

/// The diamond's source.
struct DiamondSource: StateAtom, Hashable {
    func defaultValue(context: Context) -> Int { 0 }
}

/// One of the diamond's 1,000 middles: the source's value.
struct DiamondMiddle: ValueAtom, Hashable {
    let index: Int

    func value(context: Context) throws(AtomError) -> Int {
        AtomsDiamondScenario.Books.middleRecomputations &+= 1
        return try context.watch(DiamondSource())
    }
}

/// The diamond's bottom: the sum of the middles.
struct DiamondBottom: ValueAtom, Hashable {
    func value(context: Context) throws(AtomError) -> Int {
        AtomsDiamondScenario.Books.bottomRecomputations &+= 1
        var sum = 0
        for index in 0..<AtomsDiamondScenario.width {
            sum &+= try context.watch(DiamondMiddle(index: index))
        }
        return sum
    }
}
