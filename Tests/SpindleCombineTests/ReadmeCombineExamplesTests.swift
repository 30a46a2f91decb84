#if canImport(Combine)
import Combine
#else
import OpenCombine  // as the README's snippet: Just and Empty are not re-exported
#endif
import Dispatch
import Spindle
import SpindleCombine
import Testing
import SpindleTestSupport

// Every ```swift snippet of README.md's "Using Spindle with Combine/OpenCombine",
// as literally as possible, run and checked against what the README says.
// Keep the two in step. The declarations the snippets use from earlier
// sections (`Levels`, `LevelsEvent`, `levelsReducer`, `Contact`,
// `ContactEvent`, `contactSpin`) are repeated here word for word: this test
// target does not see SpindleTests.

// README, "The levels example".
private struct Levels: Equatable, Sendable {
    var left: Int
    var right: Int
}

private enum LevelsEvent: Sendable {
    case increaseLeft
    case decreaseRight
}

@Sendable private func levelsReducer(_ state: Levels, _ event: LevelsEvent) -> Levels {
    var state = state
    switch event {
    case .increaseLeft: state.left += 1
    case .decreaseRight: state.right -= 1
    }
    return state
}

// README, "Using Spindle in a UI (UISpin)".
private struct Contact: Equatable, Sendable { var name = "" }
private enum ContactEvent: Sendable { case rename(String) }

private let contactSpin = Spin<Contact, ContactEvent>(initialState: Contact()) {
    Reducer { contact, event in
        switch event {
        case .rename(let name): return Contact(name: name)
        }
    }
}

// README, "Using Spindle with Combine/OpenCombine": publisher feedbacks.
// State form: one subscription per state. Every state's event counts, as
// in the levels example (under the default strategy, a `Just` that comes
// back after a newer state would be discarded).
private let raiseLeft = Feedback<Levels, LevelsEvent>(effect: { state in
    state.left < state.right
        ? Just(.increaseLeft).eraseToAnyPublisher()
        : Empty().eraseToAnyPublisher()
}, applying: .continueOnNewState)

// Stream form: one subscription for the loop's life.
private let lowerRight = Feedback<Levels, LevelsEvent>(streamEffect: { states in
    states
        .filter { $0.left < $0.right }
        .map { _ in .decreaseRight }
        .eraseToAnyPublisher()
})

// README: the start operators' spin.
private let levelsSpin = Spin(initialState: Levels(left: 0, right: 10)) {
    raiseLeft
    lowerRight
    Reducer(levelsReducer)
}

@Suite struct ReadmeCombineExamplesTests {
    @Test func publisherFeedbacksBalanceTheLevels() async {
        let loop = levelsSpin.start()
        #expect(await eventually { loop.state == Levels(left: 10, right: 0) })
        // No event past the balance: one the feedbacks emitted before the
        // stop is reduced by its drain, one after it is counted as discarded.
        await loop.stop()
        #expect(loop.state == Levels(left: 10, right: 0))
        #expect(loop.statistics.reducedEvents == 20)  // two per state where left < right
        #expect(loop.statistics.lateEventsDiscarded == 0)
    }

    @Test func streamFromAndStartRunAndStopTheLoop() async {
        let seen = Recorder<Levels>()
        let printing = AnyPublisher.stream(from: levelsSpin)
            .sink { state in print(state); seen.append(state) }  // the initial state first, then every new one
        #expect(await eventually { seen.values.last == Levels(left: 10, right: 0) })
        #expect(seen.values.first == Levels(left: 0, right: 10))
        #expect(seen.count == 21)
        // Later:
        printing.cancel()  // stops the loop
        // The balanced state is the last one (no feedback emits there), and
        // every state up to it is in: nothing is left to send after the cancel.
        #expect(seen.count == 21)

        let running = AnyPublisher.start(spin: levelsSpin)  // runs until cancelled or released
        // Later:
        running.cancel()
    }

    // A test process's async main serves the main queue while it awaits.
    @MainActor @Test func observableSpinPublishesOnTheMainQueueAndTheBindingEmits() async {
        let key = DispatchSpecificKey<Int>()
        DispatchQueue.main.setSpecific(key: key, value: 1)
        let printed = Recorder<String>()
        let onMain = Recorder<Bool>()

        let contact = ObservableSpin(spin: contactSpin)  // publishes on the main queue
        let names = contact.$state
            .sink { state in
                print("name: \(state.name)")  // the current state now, then on the main queue
                printed.append(state.name)
                onMain.append(DispatchQueue.getSpecific(key: key) == 1)
            }
        contact.start()

        let name = contact.binding(for: \.name, event: { .rename($0) })
        name.set("Ada")  // emits .rename("Ada"); "name: Ada" is printed once it is reduced

        #expect(await eventually(within: 30) { @Sendable in printed.values.last == "Ada" })
        // The first value is `$state`'s own, sent on subscription (here, the
        // test's thread); the rest come on the main queue.
        #expect(printed.values.first == "")
        #expect(onMain.values.dropFirst().allSatisfy { $0 })
        #expect(name.get() == "Ada")
        names.cancel()
    }
}
