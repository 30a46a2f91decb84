import Spindle
import SpindleTesting
import Testing
import SpindleLevelsFixture

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
}
