import Spindle
import Testing

/// The levels example of the Getting started article (Spin.Swift's "levels"): two feedbacks
/// move the left level up and the right level down until they meet.
struct Levels: Equatable, Sendable {
    var left: Int
    var right: Int
}

enum LevelsEvent: Sendable {
    case increaseLeft
    case decreaseRight
}

let levelsReducer = Reducer<Levels, LevelsEvent> { state, event in
    var state = state
    switch event {
    case .increaseLeft: state.left += 1
    case .decreaseRight: state.right -= 1
    }
    return state
}

@Sendable func leftEffect(_ state: Levels) -> LevelsEvent? {
    state.left < state.right ? .increaseLeft : nil
}

@Sendable func rightEffect(_ state: Levels) -> LevelsEvent? {
    state.left < state.right ? .decreaseRight : nil
}

/// Waits until the loop's states reach one satisfying `predicate`.
func firstState<S: Sendable, E: Sendable>(
    of loop: SpinLoop<S, E>, where predicate: (S) -> Bool
) async -> S? {
    for await state in loop.states() where predicate(state) { return state }
    return nil
}

@Suite struct LevelsExampleTests {
    @Test func levelsConvergeWithTheResultBuilderSyntax() async throws {
        let spin = Spin(initialState: Levels(left: 0, right: 10)) {
            Feedback(effect: leftEffect)
            Feedback(effect: rightEffect)
            Reducer(levelsReducer.reduce)
        }
        let loop = try spin.start()
        let converged = await firstState(of: loop) { $0.left >= $0.right }
        await loop.stop()
        #expect(converged != nil)
        // Both feedbacks may act on the same states, so the levels can cross;
        // what is guaranteed: they met, and every reduced event moved one.
        #expect(loop.state.left >= loop.state.right)
        #expect(loop.state.left + (10 - loop.state.right) == loop.statistics.reducedEvents)
    }

    @Test func levelsConvergeWithTheSpinnerSyntax() async throws {
        let spin = Spinner
            .initialState(Levels(left: 0, right: 20))
            .feedback(Feedback(effect: leftEffect))
            .feedback(Feedback(effect: rightEffect))
            .reducer(levelsReducer)
        let loop = try spin.start()
        let converged = await firstState(of: loop) { $0.left >= $0.right }
        await loop.stop()
        #expect(converged != nil)
        #expect(loop.state.left >= loop.state.right)
    }
}
