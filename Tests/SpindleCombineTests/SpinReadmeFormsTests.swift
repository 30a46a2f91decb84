#if SpindleCombine || canImport(Combine)
#if canImport(Combine)
import Combine
#else
import OpenCombine
#endif
import Dispatch
import Spindle
import SpindleCombine
import SpindleTestSupport
import Testing

// Spin.Swift's README, its Combine flavour, as written there: the forms must
// type-check without annotations that Spin's README does not write. What
// differs is only what cannot be the same: the imports, Combine's `Just` and
// `Empty` where the README's RxSwift snippets write `.just` and `.empty()`,
// and `DispatchQueue` where it names RxSwift schedulers. The SwiftUI view
// code (`@ObservedObject`, `Toggle`) is shown where SwiftUI exists.

// "The multiple ways to build a Spin"
private struct Levels {
    let left: Int
    let right: Int
}

private enum Event {
    case increaseLeft
    case decreaseLeft
    case increaseRight
    case decreaseRight
}

private func leftEffect(inputLevels: Levels) -> AnyPublisher<Event, Never> {
    // this is the stop condition to our Spin
    guard inputLevels.left != inputLevels.right else { return Empty().eraseToAnyPublisher() }

    // this is the regulation for the left level
    if inputLevels.left < inputLevels.right {
        return Just(.increaseLeft).eraseToAnyPublisher()
    } else {
        return Just(.decreaseLeft).eraseToAnyPublisher()
    }
}

private func rightEffect(inputLevels: Levels) -> AnyPublisher<Event, Never> {
    // this is the stop condition to our Spin
    guard inputLevels.left != inputLevels.right else { return Empty().eraseToAnyPublisher() }

    // this is the regulation for the right level
    if inputLevels.right < inputLevels.left {
        return Just(.increaseRight).eraseToAnyPublisher()
    } else {
        return Just(.decreaseRight).eraseToAnyPublisher()
    }
}

private func levelsReducer(currentLevels: Levels, event: Event) -> Levels {

    guard currentLevels.left != currentLevels.right else { return currentLevels }

    switch event {
        case .decreaseLeft:
            return Levels(left: currentLevels.left-1, right: currentLevels.right)
        case .increaseLeft:
            return Levels(left: currentLevels.left+1, right: currentLevels.right)
        case .decreaseRight:
            return Levels(left: currentLevels.left, right: currentLevels.right-1)
        case .increaseRight:
            return Levels(left: currentLevels.left, right: currentLevels.right+1)
    }
}

// A lens's effect sees a part of the state.
private func leftLevelEffect(left: Int) -> AnyPublisher<Event, Never> {
    left < 15 ? Just(.increaseLeft).eraseToAnyPublisher() : Empty().eraseToAnyPublisher()
}

// "Using Spin in a UIKit or AppKit based app" / "… SwiftUI based app"
private enum CounterState {
    case increasing(Int)
    case decreasing(Int)
    case paused(Int)

    var isCounterPaused: Bool {
        if case .paused = self { true } else { false }
    }

    var isPaused: Bool { isCounterPaused }

    var value: Int {
        switch self {
        case .increasing(let value), .decreasing(let value), .paused(let value): value
        }
    }
}

private enum CounterEvent {
    case startCounter
    case toggle
}

private let counterSpin = Spin(initialState: CounterState.paused(0), reducer: Reducer<CounterState, CounterEvent> { state, event in
    switch (state, event) {
    case (.paused(let value), _): .increasing(value + 1)
    case (.increasing(let value), .toggle), (.decreasing(let value), .toggle): .paused(value)
    case (.increasing(let value), .startCounter): .increasing(value + 1)
    case (.decreasing(let value), .startCounter): .decreasing(value - 1)
    }
}) {
    Feedback(effect: { (state: CounterState) in _ = state.value })
}

private final class CounterViewController: @unchecked Sendable {
    // @unchecked: the test touches it from one task; render runs on the main queue.
    var uiSpin: UISpin<CounterState, CounterEvent>!
    let rendered = Recorder<String>()
    var counterLabelText = ""

    func viewDidLoad() {
        // previously defined or injected: counterSpin is the Spin that handles our counter business
        self.uiSpin = UISpin(spin: counterSpin)

        // self.uiSpin is now able to handle UI side effects

        // we now want to attach the UI Spin to the rendering function of the ViewController:
        self.uiSpin.render(on: self, using: { $0.render(state:) })

        self.uiSpin.start()
        // the underlying reactive stream will be disposed once the uiSpin will be deinit
    }

    func render(state: CounterState) {
        switch state {
        case .increasing(let value):
            self.counterLabelText = "\(value)"
        case .decreasing(let value):
            self.counterLabelText = "\(value)"
        case .paused(let value):
            self.counterLabelText = "paused at \(value)"
        }
        rendered.append(counterLabelText)
    }

    func tap() {
        self.uiSpin.emit(CounterEvent.startCounter)
    }
}

@Suite struct SpinReadmeFormsTests {
    @Test func theBuilderWayWithStreamFromAndStart() async {
        var cancellables = Set<AnyCancellable>()
        let levelsSpin = Spinner
            .initialState(Levels(left: 10, right: 20))
            .feedback(Feedback(effect: leftEffect))
            .feedback(Feedback(effect: rightEffect))
            .reducer(Reducer(levelsReducer))

        let finals = Recorder<Bool>()
        AnyPublisher
            .stream(from: levelsSpin)
            .sink(receiveCompletion: { _ in }, receiveValue: { levels in finals.append(levels.left == levels.right) })
            .store(in: &cancellables)

        AnyPublisher
            .start(spin: levelsSpin)
            .store(in: &cancellables)

        #expect(await eventually { finals.values.last == true })
        cancellables.removeAll()
    }

    @Test func theDeclarativeWay() async throws {
        let levelsSpin = Spin(initialState: Levels(left: 10, right: 20),
                              reducer: Reducer(levelsReducer)) {
            Feedback(effect: leftEffect)
            Feedback(effect: rightEffect)
        }
        let sameWithCombineNames = CombineSpin(initialState: Levels(left: 10, right: 20),
                                               reducer: CombineReducer(levelsReducer)) {
            CombineFeedback(effect: leftEffect)
            CombineFeedback(effect: rightEffect)
        }
        #expect(sameWithCombineNames.feedbacks.count == 2)
        let loop = try levelsSpin.start()
        #expect(await eventually { loop.state.left == loop.state.right })
        await loop.stop()
    }

    @Test func feedbacksAndScheduling() async throws {
        let spinner = Spinner
            .initialState(Levels(left: 10, right: 20))
            .feedback(Feedback(effect: leftEffect, on: DispatchQueue(label: "left", qos: .userInitiated)))
            .feedback(Feedback(effect: rightEffect, on: DispatchQueue(label: "right", qos: .userInitiated)))
            .reducer(Reducer(levelsReducer))
        let declarative = Spin(initialState: Levels(left: 10, right: 20), reducer: Reducer(levelsReducer)) {
            Feedback(effect: leftEffect)
                .execute(on: DispatchQueue(label: "left", qos: .userInitiated))
            Feedback(effect: rightEffect)
                .execute(on: DispatchQueue(label: "right", qos: .userInitiated))
        }
        for spin in [spinner, declarative] {
            let loop = try spin.start()
            #expect(await eventually { loop.state.left == loop.state.right })
            await loop.stop()
        }
    }

    @Test func filtersLensesAndExecutionStrategies() async throws {
        // "The multiple ways to create a Feedback" and "Feedback lifecycle".
        let spin = Spin(initialState: Levels(left: 10, right: 20), reducer: Reducer(levelsReducer)) {
            Feedback(effect: leftEffect, filteredBy: { $0.left > 0 })
            Feedback(effect: leftLevelEffect, lensingOn: \.left)
            Feedback(effect: rightEffect, applying: .continueOnNewState)
        }
        let loop = try spin.start()
        #expect(await eventually { loop.state.left == loop.state.right })
        await loop.stop()
    }

    @Test func aUISpinRendersOnTheViewController() async {
        let viewController = CounterViewController()
        viewController.viewDidLoad()
        viewController.tap()
        #expect(await eventually { viewController.rendered.values.contains("1") })
    }

    @MainActor @Test func aSwiftUISpinPublishesItsStateAndMakesBindings() async {
        let uiSpin: SwiftUISpin<CounterState, CounterEvent> = {
            // previously defined or injected: counterSpin is the Spin that handles our counter business
            let spin = SwiftUISpin(spin: counterSpin)
            spin.start()
            return spin
        }()
        uiSpin.emit(CounterEvent.startCounter)
        let isPaused = uiSpin.binding(for: \.isPaused, event: .toggle)
        #expect(await eventually { @Sendable in isPaused.get() == false })
        isPaused.set(true)
        #expect(await eventually { @Sendable in isPaused.get() == true })
        #if canImport(SwiftUI)
        _ = Binding(uiSpin.binding(for: \.isPaused, event: .toggle))
        #endif
    }
}
#endif
