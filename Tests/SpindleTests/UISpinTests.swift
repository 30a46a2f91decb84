import Dispatch
import Foundation
@_spi(Testing) @_spi(Benchmarks) @_spi(Tuning) import Spindle
import Testing
import SpindleTestSupport

// UISpin, rendered on a private serial queue (the main queue runs work only
// while the main thread serves it).

/// A container that records what it renders and on which queue.
private final class Screen {
    let rendered = Recorder<Int>()
    let onRenderQueue = Recorder<Bool>()
    let key: DispatchSpecificKey<Int>

    init(key: DispatchSpecificKey<Int>) { self.key = key }

    func render(state: Int) {
        rendered.append(state)
        onRenderQueue.append(DispatchQueue.getSpecific(key: key) == 1)
    }
}

/// A container isolated to the main actor (a view controller's shape).
@MainActor
private final class MainActorScreen {
    static let mainQueueKey: DispatchSpecificKey<Int> = {
        let key = DispatchSpecificKey<Int>()
        DispatchQueue.main.setSpecific(key: key, value: 1)
        return key
    }()
    var rendered: [Int] = []
    var offMain = 0

    init() { _ = Self.mainQueueKey }

    func render(state: Int) {
        rendered.append(state)
        if DispatchQueue.getSpecific(key: Self.mainQueueKey) != 1 { offMain += 1 }
    }
}

/// Runs `body` on `queue` and waits for it without blocking a Swift
/// concurrency thread.
private func onQueue(_ queue: DispatchQueue, _ body: @escaping @Sendable () -> Void) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        queue.async {
            body()
            continuation.resume()
        }
    }
}

private func renderQueue() -> (DispatchQueue, DispatchSpecificKey<Int>) {
    let queue = DispatchQueue(label: "uispin.tests.render")
    let key = DispatchSpecificKey<Int>()
    queue.setSpecific(key: key, value: 1)
    return (queue, key)
}

/// Counts up to 20 by itself once started; its gear feedback is attached
/// while the loop runs.
private func counterSpin(gear: Gear<Int> = Gear()) -> Spin<Int, Int> {
    Spin<Int, Int>(initialState: 0) {
        Feedback(effect: { (state: Int) -> Int? in state < 20 ? 1 : nil })
        Feedback(attachedTo: gear, fromGear: { (value: Int) -> Int? in value })
        Reducer { state, event in state + event }
    }
}

@Suite struct UISpinTests {
    @Test func rendersNothingBeforeStartThenEveryStateInOrderOnTheChosenQueue() async {
        let (queue, key) = renderQueue()
        let screen = Screen(key: key)
        let gear = Gear<Int>()
        let uiSpin = UISpin(spin: counterSpin(gear: gear), renderOn: queue, rendering: .everyState)
        uiSpin.render(on: screen, using: { $0.render(state:) })
        // Renders run on the render queue, in order: once a block queued
        // after render(on:) has run, so has any render it queued.
        await onQueue(queue) {}
        #expect(screen.rendered.values.isEmpty)
        #expect(uiSpin.state == 0)
        uiSpin.start()
        uiSpin.start()  // does nothing the second time
        #expect(await eventually { screen.rendered.count == 21 })
        // A later state is a marker: once it is rendered, every render
        // before it is in, and a second loop (from the second start) would
        // have rendered its states twice.
        gear.propagate(100)
        #expect(await eventually { screen.rendered.values.last == 120 })
        #expect(screen.rendered.values == Array(0...20) + [120])
        #expect(screen.onRenderQueue.values.allSatisfy { $0 })
        #expect(uiSpin.state == 120)
    }

    @Test func theInitialStateIsRenderedFirstEvenWhenConflated() async {
        let (queue, key) = renderQueue()
        let screen = Screen(key: key)
        let uiSpin = UISpin(spin: counterSpin(), renderOn: queue)
        uiSpin.render(on: screen, using: { $0.render(state:) })
        // The render queue is held while the loop counts to 20 by itself.
        let held = DispatchSemaphore(value: 0)
        queue.async { held.wait() }
        uiSpin.start()
        #expect(await eventually { uiSpin.state == 20 })
        held.signal()
        #expect(await eventually { screen.rendered.values.last == 20 })
        #expect(screen.rendered.values == [0, 20])
    }

    @MainActor @Test func aMainActorContainerIsRenderedOnTheMainActorWhateverTheRenderQueue() async {
        let (queue, _) = renderQueue()
        let screen = MainActorScreen()
        let uiSpin = UISpin(spin: counterSpin(), renderOn: queue, rendering: .everyState)
        uiSpin.render(onMainActor: screen, using: { $0.render(state:) })
        uiSpin.start()
        #expect(await eventuallyOnMainActor { screen.rendered.last == 20 })
        #expect(screen.rendered == Array(0...20))
        #expect(screen.offMain == 0)
    }

    @Test func aContainerAddedLaterFirstSeesTheLastRenderedState() async {
        let (queue, key) = renderQueue()
        let first = Screen(key: key)
        let uiSpin = UISpin(spin: counterSpin(), renderOn: queue)
        uiSpin.render(on: first, using: { $0.render(state:) })
        uiSpin.start()
        #expect(await eventually { first.rendered.values.last == 20 })
        let later = Screen(key: key)
        uiSpin.render(on: later, using: { $0.render(state:) })
        #expect(await eventually { later.rendered.count == 1 })
        #expect(uiSpin.emit(5) == .accepted)
        #expect(await eventually { later.rendered.values == [20, 25] })
        #expect(first.rendered.values.suffix(2) == [20, 25])
    }

    @Test func theContainerIsHeldWeaklyAndNotRenderedOnceReleased() async {
        let (queue, key) = renderQueue()
        let calls = Recorder<Int>()
        let gear = Gear<Int>()
        let uiSpin = UISpin(spin: counterSpin(gear: gear), renderOn: queue)
        weak var released: Screen?
        let kept = Screen(key: key)
        do {
            let screen = Screen(key: key)
            released = screen
            uiSpin.render(on: screen, using: { container in
                calls.append(1)
                return container.render(state:)
            })
        }
        uiSpin.render(on: kept, using: { $0.render(state:) })
        #expect(released == nil)
        uiSpin.start()
        #expect(await eventually { kept.rendered.values.last == 20 })
        gear.propagate(100)
        #expect(await eventually { kept.rendered.values.last == 120 })
        #expect(calls.values.isEmpty)
    }

    @Test func releasingTheUISpinStopsItsLoopWithNothingLeftLive() async {
        let probes = ReleaseProbes()
        let gear = Gear<Int>()
        let (queue, key) = renderQueue()
        let screen = Screen(key: key)
        do {
            let (feedback, reducer) = (probes.probe(), probes.probe())
            let spin = Spin<Int, Int>(initialState: 0) {
                Feedback(effect: { (state: Int) -> Int? in
                    _ = feedback
                    return state < 20 ? 1 : nil
                })
                Feedback(attachedTo: gear, fromGear: { (value: Int) -> Int? in value })
                Reducer { state, event in
                    _ = reducer
                    return state + event
                }
            }
            let uiSpin = UISpin(spin: spin, renderOn: queue)
            uiSpin.render(on: screen, using: { $0.render(state:) })
            uiSpin.start()
            #expect(await eventually { screen.rendered.values.last == 20 })
            #expect(gear.attachedCount == 1)
        }
        // The loop stopped and let go of its feedbacks and reducer: its own
        // objects, not the process-wide counts that other tests' loops move.
        #expect(await eventually { gear.attachedCount == 0 })
        #expect(await eventually { probes.live == 0 }, "the loop still holds \(probes.live) of its closures")
    }

    @Test func rendersAreConflatedByDefaultAndEndOnTheFinalState() async {
        let (queue, key) = renderQueue()
        let screen = Screen(key: key)
        // The render queue is held until the loop has reached its final
        // state, so every state but the latest has been replaced meanwhile.
        let held = DispatchSemaphore(value: 0)
        queue.async { held.wait() }
        let uiSpin = UISpin(spin: counterSpin(), renderOn: queue)
        uiSpin.render(on: screen, using: { $0.render(state:) })
        uiSpin.start()
        #expect(await eventually { uiSpin.state == 20 })
        held.signal()
        #expect(await eventually { screen.rendered.values.last == 20 })
        // One render waited, at most one ran before the hold: never a backlog.
        #expect(screen.rendered.count <= 2)
        #expect(screen.rendered.values == screen.rendered.values.sorted())
        #expect(screen.onRenderQueue.values.allSatisfy { $0 })
    }

    @Test func emitBeforeStartIsNotAccepted() async {
        let uiSpin = UISpin(spin: counterSpin(), renderOn: renderQueue().0)
        #expect(uiSpin.emit(1) == .stopped)
        uiSpin.start()
        #expect(uiSpin.emit(1) == .accepted)
        #expect(await eventually { uiSpin.state == 21 })
    }

    @Test func bindingGetsTheValueAndItsSetterEmitsTheEvent() async {
        struct Form: Sendable, Equatable { var name = ""; var edits = 0 }
        let uiSpin = UISpin(
            spin: Spin<Form, String>(initialState: Form()) {
                Reducer { form, name in Form(name: name, edits: form.edits + 1) }
            },
            renderOn: renderQueue().0)
        uiSpin.start()
        let name = uiSpin.binding(for: \.name, event: { $0 })
        #expect(name.get() == "")
        name.set("Ada")
        #expect(await eventually { name.get() == "Ada" })
        name.wrappedValue = "Grace"
        #expect(await eventually { name.wrappedValue == "Grace" })
        #expect(uiSpin.state == Form(name: "Grace", edits: 2))
    }

    @Test func bindingWithAnEventValueEmitsThatEventOnEverySet() async {
        // Spin.Swift's form, verbatim: `binding(for: \.isPaused, event: .toggle)`.
        struct Player: Sendable, Equatable { var isPaused = false; var toggles = 0 }
        enum PlayerEvent: Sendable { case toggle }
        let uiSpin = UISpin(
            spin: Spin<Player, PlayerEvent>(initialState: Player()) {
                Reducer { player, _ in Player(isPaused: !player.isPaused, toggles: player.toggles + 1) }
            },
            renderOn: renderQueue().0)
        uiSpin.start()
        let isPaused = uiSpin.binding(for: \.isPaused, event: .toggle)
        #expect(isPaused.get() == false)
        isPaused.set(true)
        #expect(await eventually { isPaused.get() == true })
        // The value set is not the event: setting `true` again toggles again.
        isPaused.wrappedValue = true
        #expect(await eventually { uiSpin.state.toggles == 2 })
        #expect(uiSpin.state == Player(isPaused: false, toggles: 2))
    }

    // A test process's async main serves the main queue while it awaits.
    @Test func rendersOnTheMainQueueByDefault() async {
        let key = DispatchSpecificKey<Int>()
        DispatchQueue.main.setSpecific(key: key, value: 1)
        let screen = Screen(key: key)
        let uiSpin = UISpin(spin: counterSpin(), rendering: .everyState)
        uiSpin.render(on: screen, using: { $0.render(state:) })
        uiSpin.start()
        #expect(await eventually { screen.rendered.count == 21 })
        #expect(screen.onRenderQueue.values.allSatisfy { $0 })
        #expect(screen.onRenderQueue.values.count == 21)
    }
}
