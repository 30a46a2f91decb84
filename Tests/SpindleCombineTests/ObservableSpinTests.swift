#if SpindleCombine || canImport(Combine)
#if canImport(Combine)
import Combine
#else
import OpenCombine
#endif
import Dispatch
@_spi(Testing) @_spi(Benchmarks) @_spi(Tuning) import Spindle
import SpindleCombine
import Testing
import SpindleTestSupport

// ObservableSpin (Spin's SwiftUISpin), on the main actor. A test process's
// async main serves the main queue while it awaits.

/// Counts up to 20 by itself once started; its gear feedback is attached
/// while the loop runs.
private func counterSpin(gear: Gear<Int> = Gear()) -> Spin<Int, Int> {
    Spin<Int, Int>(initialState: 0) {
        Feedback(effect: { (state: Int) -> Int? in state < 20 ? 1 : nil })
        Feedback(attachedTo: gear, fromGear: { (value: Int) -> Int? in value })
        Reducer { state, event in state + event }
    }
}

@Suite struct ObservableSpinTests {
    private static let mainKey: DispatchSpecificKey<Int> = {
        let key = DispatchSpecificKey<Int>()
        DispatchQueue.main.setSpecific(key: key, value: 1)
        return key
    }()

    @MainActor @Test func publishesNothingBeforeStartThenEveryNewStateInOrderOnTheMainQueue() async {
        let key = Self.mainKey
        let published = Recorder<Int>()
        let onMain = Recorder<Bool>()
        let observable = ObservableSpin(spin: counterSpin(), publishing: .everyState)
        let bag = Bag()
        bag.keep(observable.$state.dropFirst().sink { state in
            published.append(state)
            onMain.append(DispatchQueue.getSpecific(key: key) == 1)
        })
        #expect(observable.state == 0)
        observable.start()
        observable.start()  // does nothing the second time
        #expect(await eventuallyOnMainActor { published.count == 20 })
        // The initial state is `state` already: start does not publish it again.
        #expect(published.values == Array(1...20))
        #expect(onMain.values.count == 20 && onMain.values.allSatisfy { $0 })
        #expect(observable.state == 20)
        bag.cancelAll()
    }

    /// Spin's `SwiftUISpin` publishes no state equal to the one it holds
    /// (an `Equatable` state); a state that is not `Equatable` is always
    /// published.
    @MainActor @Test func aStateEqualToTheOneHeldIsNotPublished() async {
        let published = Recorder<Int>()
        let changes = Counter()
        let observable = ObservableSpin(spin: Spin<Int, Int>(initialState: 0) {
            Reducer { _, event in event }
        }, publishing: .everyState)
        let bag = Bag()
        bag.keep(observable.$state.dropFirst().sink { published.append($0) })
        bag.keep(observable.objectWillChange.sink { _ in changes.add() })
        observable.start()
        for value in [0, 1, 1, 1, 2, 2, 0, 3] { #expect(observable.emit(value) == .accepted) }
        #expect(await eventuallyOnMainActor { published.values.last == 3 })
        #expect(published.values == [1, 2, 0, 3])
        #expect(changes.current == 4)

        struct Opaque: Sendable { var value: Int }
        let opaquePublished = Recorder<Int>()
        let opaque = ObservableSpin(spin: Spin<Opaque, Int>(initialState: Opaque(value: 0)) {
            Reducer { _, event in Opaque(value: event) }
        }, publishing: .everyState)
        bag.keep(opaque.$state.dropFirst().sink { opaquePublished.append($0.value) })
        opaque.start()
        for value in [1, 1, 2] { #expect(opaque.emit(value) == .accepted) }
        #expect(await eventuallyOnMainActor { opaquePublished.count == 3 })
        #expect(opaquePublished.values == [1, 1, 2])
        bag.cancelAll()
    }

    @MainActor @Test func objectWillChangeSendsBeforeEachChange() async {
        let before = Recorder<Int>()
        let observable = ObservableSpin(spin: counterSpin(), publishing: .everyState)
        let bag = Bag()
        bag.keep(observable.objectWillChange.sink { _ in
            before.append(MainActor.assumeIsolated { observable.state })  // still the old value
        })
        observable.start()
        #expect(await eventuallyOnMainActor { before.count == 20 })
        #expect(before.values == Array(0..<20))  // one change per new state, none at start
        bag.cancelAll()
    }

    @Test func publishingIsConflatedByDefaultAndEndsOnTheFinalState() async {
        let key = Self.mainKey
        let published = Recorder<Int>()
        let onMain = Recorder<Bool>()
        let bag = Bag()
        let observable = await MainActor.run {
            let observable = ObservableSpin(spin: Spin<Int, Int>(initialState: 0) {
                Reducer { state, event in state + event }
            })
            bag.keep(observable.$state.dropFirst().sink { state in
                published.append(state)
                onMain.append(DispatchQueue.getSpecific(key: key) == 1)
            })
            observable.start()
            return observable
        }
        // The main queue is held while 500 events are reduced: every state
        // but the latest is replaced meanwhile.
        let held = DispatchSemaphore(value: 0)
        let holding = OpenOnce()
        DispatchQueue.main.async {
            holding.open()
            held.wait()
        }
        await holding.wait()
        for _ in 0..<500 { observable.emit(1) }
        let current = observable.binding(for: \.self, event: { $0 })
        #expect(await eventually { current.get() == 500 })
        held.signal()
        #expect(await eventually { published.values.last == 500 })
        #expect(published.count <= 2)  // at most one before the hold, and the latest
        #expect(published.values == published.values.sorted())
        #expect(onMain.values.allSatisfy { $0 })
        bag.cancelAll()
    }

    @MainActor @Test func emitBeforeStartIsNotAcceptedAndAfterStartIsPublished() async {
        let observable = ObservableSpin(spin: counterSpin())
        #expect(observable.emit(1) == .stopped)
        observable.start()
        #expect(await eventuallyOnMainActor { observable.state == 20 })
        let fromAnotherThread = await Task.detached { observable.emit(5) }.value
        #expect(fromAnotherThread == .accepted)
        #expect(await eventuallyOnMainActor { observable.state == 25 })
    }

    @MainActor @Test func bindingGetsTheValueAndItsSetterEmitsTheEvent() async {
        struct Form: Sendable, Equatable { var name = ""; var edits = 0 }
        let observable = ObservableSpin(
            spin: Spin<Form, String>(initialState: Form()) {
                Reducer { form, name in Form(name: name, edits: form.edits + 1) }
            },
            publishing: .everyState)
        let names = Recorder<String>()
        let bag = Bag()
        bag.keep(observable.$state.dropFirst().sink { names.append($0.name) })
        let name = observable.binding(for: \.name, event: { $0 })
        #expect(name.get() == "")
        name.set("Ada")  // before start: not accepted
        observable.start()
        name.set("Ada")
        #expect(await eventuallyOnMainActor { name.get() == "Ada" })
        name.wrappedValue = "Grace"
        #expect(await eventuallyOnMainActor { names.values == ["Ada", "Grace"] })
        #expect(await eventuallyOnMainActor { observable.state == Form(name: "Grace", edits: 2) })
        bag.cancelAll()
    }

    @MainActor @Test func releasingTheObservableSpinStopsItsLoop() async {
        let gear = Gear<Int>()
        weak var released: ObservableSpin<Int, Int>?
        do {
            let observable = ObservableSpin(spin: counterSpin(gear: gear))
            released = observable
            observable.start()
            #expect(await eventuallyOnMainActor { gear.attachedCount == 1 })
        }
        #expect(await eventuallyOnMainActor { released == nil })
        #expect(await eventuallyOnMainActor { gear.attachedCount == 0 })
    }
}

/// Carries a cancellable made on a queue back to the test.
struct SinkBox: @unchecked Sendable {
    // @unchecked: handed over once, from the queue to the test, and only
    // kept and cancelled afterwards (`cancel()` is thread-safe).
    let cancellable: AnyCancellable
    init(_ cancellable: AnyCancellable) { self.cancellable = cancellable }
}
#endif
