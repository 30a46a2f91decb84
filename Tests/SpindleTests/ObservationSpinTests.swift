#if canImport(Observation)
import Observation
import Spindle
import Testing
import SpindleTestSupport

// ObservationSpin: the @Observable model on the main actor (a test process's
// async main serves the main queue while it awaits).
@Suite struct ObservationSpinTests {
    /// Counts up to `limit` by itself once started.
    private func counterSpin(limit: Int = 20) -> Spin<Int, Int> {
        Spin<Int, Int>(initialState: 0) {
            Feedback(effect: { (state: Int) -> Int? in state < limit ? 1 : nil })
            Reducer { state, event in state + event }
        }
    }

    @MainActor @Test func theStateFollowsTheLoopAndObservationSeesItChange() async {
        let model = ObservationSpin(spin: counterSpin())
        #expect(model.state == 0)
        let changed = Counter()
        withObservationTracking {
            _ = model.state
        } onChange: {
            changed.add()
        }
        model.start()
        model.start()  // does nothing the second time
        #expect(await eventuallyOnMainActor { model.state == 20 })
        #expect(changed.current == 1)  // onChange fires once per tracking
    }

    /// A state whose `==` ignores its stamp, and records each comparison
    /// (held, rendered) as (value, stamp, value, stamp): only this suite's
    /// skip test uses it.
    private struct Stamped: Equatable, Sendable {
        var value: Int
        var stamp: Int
        static let comparisons = Locked<[[Int]]>([])

        static func == (lhs: Stamped, rhs: Stamped) -> Bool {
            comparisons.withLock { $0.append([lhs.value, lhs.stamp, rhs.value, rhs.stamp]) }
            return lhs.value == rhs.value
        }
    }

    private enum StampEvent: Sendable {
        case increment
        case restamp(Int)
    }

    /// Spin.Swift's `SwiftUISpin` skips a state equal to the one it holds;
    /// so does `state` here. The restamped state is equal to the held one
    /// (its stamp is not compared): `state` keeps the held stamp.
    @MainActor @Test func aStateEqualToTheOneHeldIsNotSet() async {
        // A repeated run must not find an earlier run's comparison.
        Stamped.comparisons.withLock { $0.removeAll() }
        let model = ObservationSpin(spin: Spin<Stamped, StampEvent>(initialState: Stamped(value: 0, stamp: 0)) {
            Reducer { state, event in
                switch event {
                case .increment: Stamped(value: state.value + 1, stamp: state.stamp)
                case .restamp(let stamp): Stamped(value: state.value, stamp: stamp)
                }
            }
        }, publishing: .everyState)
        model.start()
        model.emit(.increment)
        #expect(await eventuallyOnMainActor { model.state.value == 1 })
        model.emit(.restamp(1))
        // The positive signal: the render of the restamped state compared
        // it with the held one, inside the main-actor job that would set
        // it right after. The check runs on the main actor too, so it sees
        // the comparison only once that job is over.
        #expect(await eventuallyOnMainActor { Stamped.comparisons.withLock { $0.contains([1, 0, 1, 1]) } })
        #expect(model.state.stamp == 0, "the equal state was set")
        // The loop holds the restamped state: the next state carries it.
        model.emit(.increment)
        #expect(await eventuallyOnMainActor { model.state.value == 2 })
        #expect(model.state.stamp == 1)
    }

    /// The filter behind that skip (and ObservableSpin's): the initial
    /// render, an equal state, a state with no `==`.
    @Test func theFilterSkipsTheInitialRenderAndAStateEqualToTheHeldOne() {
        var equatable = HeldStateFilter<Int>()
        let intAnswers = [(0, 0), (0, 0), (1, 0), (1, 1)].map { equatable.admits($0.0, replacing: $0.1) }
        // The initial render, then an equal state: both skipped.
        #expect(intAnswers == [false, false, true, false])

        struct Opaque: Sendable { let value: Int }  // not Equatable
        var opaque = HeldStateFilter<Opaque>()
        let opaqueAnswers = [0, 0].map { opaque.admits(Opaque(value: $0), replacing: Opaque(value: 0)) }
        // The initial render skipped; then no == to skip by.
        #expect(opaqueAnswers == [false, true])
    }

    @MainActor @Test func everyStateModeEndsOnTheFinalStateToo() async {
        let model = ObservationSpin(spin: counterSpin(limit: 200), publishing: .everyState)
        model.start()
        #expect(await eventuallyOnMainActor { model.state == 200 })
    }

    @MainActor @Test func emitAndBindingsWorkFromAnyThreadAndBeforeStartNothingIsAccepted() async {
        let model = ObservationSpin(spin: Spin<Int, Int>(initialState: 0) {
            Reducer { state, event in state + event }
        })
        #expect(model.emit(1) == .stopped)
        model.start()
        let accepted = await Task.detached { model.emit(5) }.value
        #expect(accepted == .accepted)
        #expect(await eventuallyOnMainActor { model.state == 5 })
        let doubled = model.binding(for: \.self, event: { $0 })
        doubled.set(10)
        #expect(await eventuallyOnMainActor { model.state == 15 })
        let plusOne = model.binding(for: \.self, event: 1)
        plusOne.set(999)  // the value is not the event
        #expect(await eventuallyOnMainActor { model.state == 16 })
        #expect(plusOne.get() == 16)
    }
}
#endif
