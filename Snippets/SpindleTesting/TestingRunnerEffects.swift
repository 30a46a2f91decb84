// The deterministic runner and effects as data: a reducer that returns
// effects, and a route whose handler waits on the injected clock.
import Spindle
import SpindleTesting
// snippet.hide

struct Suggest: Equatable, Sendable {
    var prefix = ""
    var words: [String] = []
}

enum SuggestEvent: Equatable, Sendable {
    case typed(String)
    case found([String])
}

enum SuggestEffect: Equatable, Sendable {
    case lookUp(String)
}

@Sendable func suggestNext(_ state: Suggest, _ event: SuggestEvent) -> Next<Suggest, SuggestEffect> {
    switch event {
    case .typed(let prefix): .next(Suggest(prefix: prefix), effects: [.lookUp(prefix)])
    case .found(let words): .next(Suggest(prefix: state.prefix, words: words))
    }
}
// snippet.show

func suggestSpin(clock: some Clock<Duration>) -> Spin<Suggest, SuggestEvent> {
    let router = EffectRouter<SuggestEffect, SuggestEvent>()
        .route({ effect -> String? in if case .lookUp(let prefix) = effect { prefix } else { nil } }) { prefix in
            try await clock.sleep(for: .milliseconds(50))  // stands in for the network
            return .found(["\(prefix)a", "\(prefix)b"])
        }
    return Spin(initialState: Suggest()) {
        Reducer(suggestNext, effects: router)
    }
}

func typingLooksUpSuggestions() throws {
    let clock = TestClock()
    let runner = TestSpin(suggestSpin(clock: clock))

    // snippet.effects
    runner.send(.typed("sw"))
    let dispatched = runner.effects(as: SuggestEffect.self)  // [.lookUp("sw")]: its handler sleeps
    // snippet.end
    clock.advance(by: .milliseconds(50))  // the handler wakes; .found is reduced

    try runner.expectState(Suggest(prefix: "sw", words: ["swa", "swb"]))
    let started = runner.effectLog.startedRuns()  // [TestEffectRun(effect: 0, route: 0, state: 1)]
    let unhandled = runner.unhandledEffects(as: SuggestEffect.self)  // []
    // snippet.hide
    precondition(dispatched == [.lookUp("sw")], "dispatched \(dispatched)")
    precondition(started == [TestEffectRun(effect: 0, route: 0, state: 1)], "started \(started)")
    precondition(unhandled.isEmpty, "unhandled \(unhandled)")
    precondition(runner.runUntilIdle() == .settled, "the runner should settle")
    // snippet.show
}
// snippet.hide
try typingLooksUpSuggestions()
