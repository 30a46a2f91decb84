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

// ObservableSpin (Spin's SwiftUISpin), published on a private serial queue
// (the main queue runs work only while the main thread serves it; the last
// test uses it, as UISpinTests does).

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
    @Test func publishesNothingBeforeStartThenEveryStateInOrderOnTheChosenQueue() async {
        let (queue, key) = markedQueue("observablespin.tests.publish")
        let published = Recorder<Int>()
        let onQueue = Recorder<Bool>()
        let observable = ObservableSpin(spin: counterSpin(), publishOn: queue, publishing: .everyState)
        let bag = Bag()
        bag.keep(observable.$state.dropFirst().sink { state in
            published.append(state)
            onQueue.append(DispatchQueue.getSpecific(key: key) == 1)
        })
        try? await Task.sleep(for: .milliseconds(50))
        #expect(published.values.isEmpty)
        #expect(observable.state == 0)
        observable.start()
        observable.start()  // does nothing the second time
        #expect(await eventually { published.count == 21 })
        try? await Task.sleep(for: .milliseconds(50))
        #expect(published.values == Array(0...20))  // the initial state first
        #expect(onQueue.values.count == 21 && onQueue.values.allSatisfy { $0 })
        #expect(await on(queue) { observable.state } == 20)
        bag.cancelAll()
    }

    @Test func objectWillChangeSendsOnTheChosenQueueBeforeEachChange() async {
        let (queue, key) = markedQueue("observablespin.tests.willchange")
        let before = Recorder<Int>()
        let onQueue = Recorder<Bool>()
        let observable = ObservableSpin(spin: counterSpin(), publishOn: queue, publishing: .everyState)
        let bag = Bag()
        bag.keep(observable.objectWillChange.sink { _ in
            before.append(observable.state)  // still the old value
            onQueue.append(DispatchQueue.getSpecific(key: key) == 1)
        })
        observable.start()
        #expect(await eventually { before.count == 21 })
        #expect(before.values == [0] + Array(0..<20))
        #expect(onQueue.values.allSatisfy { $0 })
        bag.cancelAll()
    }

    @Test func publishingIsConflatedByDefaultAndEndsOnTheFinalState() async {
        let (queue, key) = markedQueue("observablespin.tests.conflated")
        let published = Recorder<Int>()
        let onQueue = Recorder<Bool>()
        // The publish queue is held until the loop has reached its final
        // state: every state but the latest is replaced meanwhile.
        let held = DispatchSemaphore(value: 0)
        queue.async { held.wait() }
        let observable = ObservableSpin(spin: counterSpin(), publishOn: queue)
        let bag = Bag()
        bag.keep(observable.$state.dropFirst().sink { state in
            published.append(state)
            onQueue.append(DispatchQueue.getSpecific(key: key) == 1)
        })
        observable.start()
        #expect(await eventually { observable.binding(for: \.self, event: { $0 }).get() == 20 })
        held.signal()
        #expect(await eventually { published.values.last == 20 })
        #expect(published.count <= 2)
        #expect(published.values == published.values.sorted())
        #expect(onQueue.values.allSatisfy { $0 })
        bag.cancelAll()
    }

    @Test func emitBeforeStartIsNotAcceptedAndAfterStartIsPublished() async {
        let (queue, _) = markedQueue("observablespin.tests.emit")
        let observable = ObservableSpin(spin: counterSpin(), publishOn: queue)
        #expect(observable.emit(1) == .stopped)
        observable.start()
        #expect(await eventually { observable.binding(for: \.self, event: { $0 }).get() == 20 })
        #expect(observable.emit(5) == .accepted)
        let published = Recorder<Int>()
        let bag = Bag()
        bag.keep(await on(queue) { [bag] in
            _ = bag
            return SinkBox(observable.$state.sink { published.append($0) })
        }.cancellable)
        #expect(await eventually { published.values.last == 25 })
        bag.cancelAll()
    }

    @Test func bindingGetsTheValueAndItsSetterEmitsTheEvent() async {
        struct Form: Sendable, Equatable { var name = ""; var edits = 0 }
        let (queue, _) = markedQueue("observablespin.tests.binding")
        let observable = ObservableSpin(
            spin: Spin<Form, String>(initialState: Form()) {
                Reducer { form, name in Form(name: name, edits: form.edits + 1) }
            },
            publishOn: queue)
        let names = Recorder<String>()
        let bag = Bag()
        bag.keep(observable.$state.dropFirst().sink { names.append($0.name) })
        let name = observable.binding(for: \.name, event: { $0 })
        #expect(name.get() == "")
        name.set("Ada")  // before start: not accepted
        observable.start()
        #expect(await eventually { names.count == 1 })
        name.set("Ada")
        #expect(await eventually { name.get() == "Ada" })
        name.wrappedValue = "Grace"
        #expect(await eventually { names.values == ["", "Ada", "Grace"] })
        #expect(await on(queue) { observable.state } == Form(name: "Grace", edits: 2))
        bag.cancelAll()
    }

    @Test func releasingTheObservableSpinStopsItsLoop() async {
        let gear = Gear<Int>()
        let (queue, _) = markedQueue("observablespin.tests.release")
        weak var released: ObservableSpin<Int, Int>?
        do {
            let observable = ObservableSpin(spin: counterSpin(gear: gear), publishOn: queue)
            released = observable
            observable.start()
            #expect(await eventually { gear.attachedCount == 1 })
        }
        #expect(await eventually { released == nil })
        #expect(await eventually { gear.attachedCount == 0 })
    }

    // A test process's async main serves the main queue while it awaits.
    @Test func publishesOnTheMainQueueByDefault() async {
        let key = DispatchSpecificKey<Int>()
        DispatchQueue.main.setSpecific(key: key, value: 1)
        let published = Recorder<Int>()
        let onMain = Recorder<Bool>()
        let observable = ObservableSpin(spin: counterSpin(), publishing: .everyState)
        let bag = Bag()
        bag.keep(observable.$state.dropFirst().sink { state in
            published.append(state)
            onMain.append(DispatchQueue.getSpecific(key: key) == 1)
        })
        observable.start()
        #expect(await eventually(within: 30) { published.count == 21 })
        #expect(published.values == Array(0...20))
        #expect(onMain.values.count == 21 && onMain.values.allSatisfy { $0 })
        bag.cancelAll()
    }
}

/// Carries a cancellable made on a queue back to the test.
struct SinkBox: @unchecked Sendable {
    // @unchecked: handed over once, from the queue to the test, and only
    // kept and cancelled afterwards (`cancel()` is thread-safe).
    let cancellable: AnyCancellable
    init(_ cancellable: AnyCancellable) { self.cancellable = cancellable }
}
