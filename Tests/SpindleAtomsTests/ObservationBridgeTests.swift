#if canImport(Observation)
import Observation
import Spindle
import SpindleAtoms
import SpindleTestSupport
import Testing

@Suite struct ObservationBridgeTests {
    @Test func aTrackerIsInvalidatedOnlyWhenTheValueChanges() throws {
        struct Parity: ValueAtom, Hashable {
            func value(context: Context) throws(AtomError) -> Bool { try context.watch(Source(id: 0)) % 2 == 0 }
        }
        let store = AtomStore()
        let keep = try store.watch(Source(id: 0)) { _ in }
        let parity = try store.observable(Parity())
        let invalidations = Counter()
        func track() {
            withObservationTracking { _ = parity.value } onChange: { _ = invalidations.add() }
        }
        track()
        try store.set(2, for: Source(id: 0))  // still even
        #expect(invalidations.current == 0)
        try store.set(3, for: Source(id: 0))
        #expect(invalidations.current == 1)
        #expect(parity.value == false)
        track()
        try store.set(5, for: Source(id: 0))
        #expect(invalidations.current == 1)
        try store.set(6, for: Source(id: 0))
        #expect(invalidations.current == 2)
        #expect(parity.value == true)
        keep.cancel()
    }
}
#endif
