import CMallocCounter
import SpindleAtoms

/// `atoms-churn`: N distinct derived atoms (each a keyed value atom watching
/// one of four state atoms) watched and released through a window of 1,000:
/// watch atom k, release atom k − 1,000, so 1,000 are in use at a time and
/// every atom is made, computed, watched, released and freed once.
///
/// Before the clock the store has its four state atoms watched and one
/// window churned through it (so that its tables have the size 1,000 atoms
/// in use need); the heap in use (`mallinfo2`) and the RSS (after a
/// `malloc_trim`) are read then, and again once every atom is released and
/// its subscription freed. Clock: the N watches and releases. Rate: atoms
/// churned per second (each one watch and one release: `operations` counts
/// both). Checked: each watch began with its atom's value, and the store
/// holds only the four state atoms at the end. The goal: the heap after
/// within 1 % of before (`heap_growth_percent`).
enum AtomsChurnScenario {
    static let window = 1_000
    static let sources = 4

    static let scenario = Scenario(
        name: "atoms-churn",
        producers: 1,
        description: """
            N distinct derived atoms (keyed value atoms, each watching one of 4 state atoms) \
            watched then released through a window of 1,000 in use. Not timed: the state \
            atoms watched, one window churned. Clock: the N watches and releases. Rate: atoms \
            watched and released per second. Counters: heap in use (mallinfo2) and RSS \
            before and after (after: every atom released, its subscription freed).
            """,
        defaultEvents: 1_000_000,
        quickEvents: 20_000,
        engines: [.atoms],
        yardstick: nil,
        measure: measure)

    private static func measure(_ run: ScenarioRun) async throws -> Sample {
        let atoms = run.events
        let store = AtomStore()
        var keep: [AtomSubscription<Int>] = []
        for id in 0..<sources {
            keep.append(try store.watch(ChurnSource(id: id)) { _ in })
            try store.set(sourceValue(id), for: ChurnSource(id: id))
        }
        var wrong = try churn(store, keys: 0..<window)
        let heapBefore = PeakMemory.heapInUse()
        bench_malloc_trim()
        let rssBefore = PeakMemory.resident()

        let region = MeasuredRegion.begin()
        wrong += try churn(store, keys: window..<(window + atoms))
        let measured = region.end()

        let heapAfter = PeakMemory.heapInUse()
        bench_malloc_trim()
        let rssAfter = PeakMemory.resident()
        let held = try store.snapshot().count
        for subscription in keep { subscription.cancel() }
        store.close()
        try expect(wrong == 0, "\(wrong) watches began with a wrong value", in: run)
        try expect(held == sources, "the store held \(held) atoms after the churn, expected its \(sources) state atoms", in: run)

        var counters = ["operations": 2 * atoms]
        var figures: [String: Double] = [:]
        if let heapBefore, let heapAfter {
            counters["heap_before_bytes"] = heapBefore
            counters["heap_after_bytes"] = heapAfter
            figures["heap_growth_percent"] = Double(heapAfter - heapBefore) / Double(max(heapBefore, 1)) * 100
        }
        if let rssBefore, let rssAfter {
            counters["rss_before_bytes"] = rssBefore
            counters["rss_after_bytes"] = rssAfter
            figures["rss_growth_percent"] = Double(rssAfter - rssBefore) / Double(max(rssBefore, 1)) * 100
        }
        return Sample(
            events: atoms, elapsedNanoseconds: measured.elapsedNanoseconds, allocations: measured.allocations,
            counters: counters, figures: figures)
    }

    private static func sourceValue(_ id: Int) -> Int { (id + 1) * 1_000_000_000 }

    /// Watches the atom of each key, releasing the one `window` keys back
    /// (its subscription dropped: its `deinit` cancels the watch); then
    /// releases the last window. Returns how many watches began with a
    /// value other than their atom's.
    private static func churn(_ store: AtomStore, keys: Range<Int>) throws -> Int {
        var ring = [AtomSubscription<Int>?](repeating: nil, count: window)
        var wrong = 0
        for (offset, key) in keys.enumerated() {
            let slot = offset % window
            ring[slot] = nil
            let subscription = try store.watch(ChurnDerived(key: key)) { _ in }
            if subscription.initialValue != sourceValue(key % sources) + key { wrong += 1 }
            ring[slot] = subscription
        }
        for slot in ring.indices { ring[slot] = nil }
        return wrong
    }
}

/// One of `atoms-churn`'s state atoms.
struct ChurnSource: StateAtom, Hashable {
    let id: Int
    func defaultValue(context: Context) -> Int { 0 }
}

/// A churned atom: its source's value + its key.
struct ChurnDerived: ValueAtom, Hashable {
    let key: Int

    func value(context: Context) throws(AtomError) -> Int {
        try context.watch(ChurnSource(id: key % AtomsChurnScenario.sources)) &+ key
    }
}
