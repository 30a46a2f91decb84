import Spindle
import SpindleTesting
import Testing
import SpindleLevelsFixture
import SpindleTestSupport

@Suite struct ReducerSpecTests {
    let spec = ReducerSpec(Reducer(levelsReducer))
    let wrong = ReducerSpec(Reducer(wrongLevelsReducer))

    @Test func aRightReducerPassesEveryFormOfThen() throws {
        let outcome = spec.given(Levels(left: 0, right: 10)).when(.increaseLeft, .decreaseRight)
        try outcome.thenState(equals: Levels(left: 1, right: 9))
        try outcome.thenStates(equal: [Levels(left: 1, right: 10), Levels(left: 1, right: 9)])
        try outcome.then("the levels moved closer") { $0.right - $0.left == 8 }
        try outcome.then { state in
            if state.left != 1 { throw SpecFailure(message: "left is \(state.left)") }
        }
    }

    @Test func eventsAreReducedInOrderFromTheGivenState() {
        let outcome = spec.given(Levels(left: 5, right: 5)).when([.decreaseRight, .decreaseRight, .increaseLeft])
        #expect(outcome.states.map(\.right) == [4, 3, 3])
        #expect(outcome.finalState == Levels(left: 6, right: 3))
        #expect(spec.given(Levels(left: 5, right: 5)).when([]).finalState == Levels(left: 5, right: 5))
    }

    @Test func aWrongReducerFailsWithBothStatesAndTheirDifference() throws {
        let failure = try #require(throws: SpecFailure.self) {
            try wrong.given(Levels(left: 0, right: 10))
                .when(.increaseLeft, .decreaseRight)
                .thenState(equals: Levels(left: 1, right: 9))
        }
        let message = failure.message
        #expect(message.hasPrefix("ReducerSpec failed: the final state is not the expected one"))
        #expect(message.contains("given:\n  Levels(left: 0, right: 10)\n"))
        #expect(message.contains("when:\n  1. increaseLeft\n  2. decreaseRight\n"))
        #expect(message.contains("expected state:\n  Levels(left: 1, right: 9)\n"))
        #expect(message.contains("final state:\n  Levels(left: 2, right: 9)"))
        // Only the lines that differ, as `dump` prints them.
        #expect(message.contains("difference (− expected, + actual):\n  −   - left: 1\n  +   - left: 2\nfinal state:"))
        #expect(failure.fileID.hasSuffix("ReducerSpecTests.swift"))
        #expect(failure.description.contains("ReducerSpecTests.swift:"))
    }

    @Test func thenStatesNamesTheFirstEventWhoseStateDiffers() throws {
        let failure = try #require(throws: SpecFailure.self) {
            try wrong.given(Levels(left: 0, right: 10))
                .when(.decreaseRight, .increaseLeft)
                .thenStates(equal: [Levels(left: 0, right: 9), Levels(left: 1, right: 9)])
        }
        #expect(failure.message.contains("the state after event 2 (increaseLeft) is not the expected one"))
        #expect(failure.message.contains("expected after event 2:\n  Levels(left: 1, right: 9)\n"))
        #expect(failure.message.contains("actual after event 2:\n  Levels(left: 2, right: 9)\n"))
    }

    @Test func aFalsePredicateAndAThrowingAssertionBothNameTheSpec() throws {
        let outcome = wrong.given(Levels(left: 0, right: 10)).when(.increaseLeft)
        let predicate = try #require(throws: SpecFailure.self) {
            try outcome.then("left is 1") { $0.left == 1 }
        }
        #expect(predicate.message.hasPrefix("ReducerSpec failed: expected left is 1\n"))
        #expect(predicate.message.contains("final state:\n  Levels(left: 2, right: 10)"))

        struct LeftIsWrong: Error {}
        let assertion = try #require(throws: SpecFailure.self) {
            try outcome.then { _ in throw LeftIsWrong() }
        }
        #expect(assertion.message.hasPrefix("ReducerSpec failed: the assertion threw: LeftIsWrong()\n"))
    }

    // MARK: Effects (a reducer returning `Next`; `lookupNext` is in TestSpinEffectsTests)

    @Test func aReducerWithEffectsPassesEveryEffectCheck() throws {
        let outcome = ReducerSpec(next: lookupNext).given(Lookup()).when(.typed("s"), .save)
        try outcome.then(state: Lookup(query: "s", saved: true), effects: [LookupEffect.search("s"), .store([])])
        try outcome.thenEffects(equal: [LookupEffect.search("s"), .store([])])
        try outcome.thenEffects(contain: [LookupEffect.store([])])
        try outcome.thenEffects(contain: [LookupEffect]())
        #expect(outcome.effects(as: LookupEffect.self) == [.search("s"), .store([])])
        try ReducerSpec(next: lookupNext).given(Lookup()).when(.gaveUp("x")).thenNoEffects()
        try spec.given(Levels(left: 0, right: 10)).when(.increaseLeft).thenNoEffects()
    }

    @Test func aSpecOverAReducerWithARouterRecordsTheEffectsAndRunsNoHandler() throws {
        let ran = Recorder<String>()
        let router = EffectRouter<LookupEffect, LookupEvent>()
            .routeCase(LookupEffect.search) { query in
                ran.append(query)
                return nil
            }
        try ReducerSpec(Reducer(lookupNext, effects: router))
            .given(Lookup())
            .when(.typed("sw"))
            .then(state: Lookup(query: "sw"), effects: [LookupEffect.search("sw")])
        #expect(ran.values.isEmpty)
    }

    @Test func wrongEffectsFailWithBothListsAndTheirDifference() throws {
        let failure = try #require(throws: SpecFailure.self) {
            try ReducerSpec(next: lookupNext)
                .given(Lookup())
                .when(.typed("sw"), .gaveUp("sw"))
                .thenEffects(equal: [LookupEffect.search("s")])
        }
        let message = failure.message
        #expect(message.hasPrefix("ReducerSpec failed: the effects are not the expected ones\n"))
        #expect(message.contains("when:\n  1. typed(\"sw\") → effects: [search(\"sw\")]\n  2. gaveUp(\"sw\") → no effects\n"))
        #expect(message.contains("expected effects:\n  [search(\"s\")]\nactual effects:\n  [search(\"sw\")]\n"))
        #expect(message.contains("difference (− expected, + actual):\n"))
        #expect(message.contains("final state:\n  Lookup(query: \"sw\""))
        #expect(failure.fileID.hasSuffix("ReducerSpecTests.swift"))
    }

    @Test func aMissingEffectAnUnexpectedEffectAndAWrongStateEachFail() throws {
        let outcome = ReducerSpec(next: lookupNext).given(Lookup()).when(.typed("q"))
        let missing = try #require(throws: SpecFailure.self) {
            try outcome.thenEffects(contain: [LookupEffect.search("q"), .search("q"), .log("x")])
        }
        #expect(missing.message.hasPrefix("ReducerSpec failed: the effects do not contain every expected one\n"))
        #expect(missing.message.contains("missing effects:\n  [search(\"q\"), log(\"x\")]\n"))

        let unexpected = try #require(throws: SpecFailure.self) { try outcome.thenNoEffects() }
        #expect(unexpected.message.hasPrefix("ReducerSpec failed: expected no effects, but the events dispatched 1\n"))
        #expect(unexpected.message.contains("actual effects:\n  [search(\"q\")]\n"))

        let wrongState = try #require(throws: SpecFailure.self) {
            try outcome.then(state: Lookup(query: "x"), effects: [LookupEffect.search("q")])
        }
        #expect(wrongState.message.hasPrefix("ReducerSpec failed: the final state is not the expected one\n"))
    }

    @Test func effectChecksOnAPlainReducerOrOfAnotherTypeFail() throws {
        let plain = try #require(throws: SpecFailure.self) {
            try spec.given(Levels(left: 0, right: 10)).when(.increaseLeft).thenEffects(equal: [LookupEffect.log("x")])
        }
        #expect(plain.message.hasPrefix("ReducerSpec failed: expected effects, but the reducer has none"))
        // A plain reducer's failure lists its events without effects.
        #expect(plain.message.contains("when:\n  1. increaseLeft\n"))

        let wrongType = try #require(throws: SpecFailure.self) {
            try ReducerSpec(next: lookupNext).given(Lookup()).when(.typed("q")).thenEffects(equal: ["search"])
        }
        #expect(wrongType.message.hasPrefix("ReducerSpec failed: the reducer's effects are LookupEffect, not String\n"))
    }
}
