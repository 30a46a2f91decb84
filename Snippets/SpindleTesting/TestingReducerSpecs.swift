// Reducer specs: given a state, when these events are reduced, then the
// state (and the effects) are these. No loop, no thread, synchronous.
// snippet.imports
import Spindle
import SpindleTesting
// snippet.end
// snippet.hide

struct Levels: Equatable, Sendable {
    var left: Int
    var right: Int
}

enum LevelsEvent: Sendable {
    case increaseLeft
    case decreaseRight
}

@Sendable func levelsReducer(_ state: Levels, _ event: LevelsEvent) -> Levels {
    var state = state
    switch event {
    case .increaseLeft: state.left += 1
    case .decreaseRight: state.right -= 1
    }
    return state
}

/// A deliberately wrong reducer: `.increaseLeft` adds 2.
@Sendable func wrongLevelsReducer(_ state: Levels, _ event: LevelsEvent) -> Levels {
    var state = state
    switch event {
    case .increaseLeft: state.left += 2
    case .decreaseRight: state.right -= 1
    }
    return state
}

struct Mismatch: Error {
    let what: String
    init(_ what: String) { self.what = what }
}
// snippet.show

// snippet.spec
// A test: mark it @Test (Swift Testing), or name it test… in an XCTestCase.
func increasingLeftThenDecreasingRight() throws {
    try ReducerSpec(Reducer(levelsReducer))
        .given(Levels(left: 0, right: 10))
        .when(.increaseLeft, .decreaseRight)
        .thenState(equals: Levels(left: 1, right: 9))
}
// snippet.end
// snippet.hide
try increasingLeftThenDecreasingRight()
// snippet.show

// snippet.thens
let outcome = ReducerSpec(Reducer(levelsReducer))
    .given(Levels(left: 0, right: 10))
    .when(.increaseLeft, .increaseLeft)

try outcome.then("left went up twice") { $0.left == 2 }
try outcome.thenStates(equal: [Levels(left: 1, right: 10), Levels(left: 2, right: 10)])
try outcome.then { state in
    // Any check that throws; in Swift Testing, `try #require(state.right == 10)`.
    guard state.right == 10 else { throw Mismatch("the right level moved") }
}
// snippet.end
// snippet.hide
precondition(outcome.finalState == Levels(left: 2, right: 10), "final state \(outcome.finalState)")
// snippet.show

// snippet.failure
do {
    try ReducerSpec(Reducer(wrongLevelsReducer))  // `.increaseLeft` adds 2
        .given(Levels(left: 0, right: 10))
        .when(.increaseLeft, .decreaseRight)
        .thenState(equals: Levels(left: 1, right: 9))
} catch let failure as SpecFailure {
    print(failure.message)
    // snippet.hide
    precondition(failure.message == """
        ReducerSpec failed: the final state is not the expected one
        given:
          Levels(left: 0, right: 10)
        when:
          1. increaseLeft
          2. decreaseRight
        expected state:
          Levels(left: 1, right: 9)
        difference (− expected, + actual):
          −   - left: 1
          +   - left: 2
        final state:
          Levels(left: 2, right: 9)
        """, "the failure's message changed:\n\(failure.message)")
    // snippet.show
}
// snippet.end
// snippet.hide
var caught = false
do {
    try ReducerSpec(Reducer(wrongLevelsReducer)).given(Levels(left: 0, right: 10)).when(.increaseLeft)
        .thenState(equals: Levels(left: 1, right: 10))
} catch is SpecFailure {
    caught = true
}
precondition(caught, "a wrong reducer's spec should throw a SpecFailure")
// snippet.show

// snippet.effectTypes
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

// The reducer returns the next state and the effects to run, as data.
@Sendable func suggestNext(_ state: Suggest, _ event: SuggestEvent) -> Next<Suggest, SuggestEffect> {
    switch event {
    case .typed(let prefix): .next(Suggest(prefix: prefix), effects: [.lookUp(prefix)])
    case .found(let words): .next(Suggest(prefix: state.prefix, words: words))
    }
}
// snippet.end

// snippet.effects
let typing = ReducerSpec(next: suggestNext)  // records the effects, runs no handler
    .given(Suggest())
    .when(.typed("s"), .typed("sw"))

try typing.thenEffects(equal: [SuggestEffect.lookUp("s"), .lookUp("sw")])  // all, in order
try typing.thenEffects(contain: [SuggestEffect.lookUp("sw")])              // these, among others
try typing.then(state: Suggest(prefix: "sw"), effects: [SuggestEffect.lookUp("s"), .lookUp("sw")])

try ReducerSpec(next: suggestNext)
    .given(Suggest(prefix: "sw"))
    .when(.found(["swa", "swb"]))
    .thenNoEffects()
// snippet.end
// snippet.hide
precondition(
    typing.effects(as: SuggestEffect.self) == [.lookUp("s"), .lookUp("sw")],
    "the effects should be recorded in order: \(typing.effects(as: SuggestEffect.self))")
var missed = false
do {
    try typing.thenEffects(contain: [SuggestEffect.lookUp("x")])
} catch is SpecFailure {
    missed = true
}
precondition(missed, "a missing effect should fail the spec")
