// The levels example of the Getting started article (DocC), for the test targets
// that use it as a fixture.
// Codable so that SpindleReplay can record it.

package struct Levels: Equatable, Sendable, Codable {
    package var left: Int
    package var right: Int
    package init(left: Int, right: Int) {
        self.left = left
        self.right = right
    }
}

package enum LevelsEvent: Equatable, Sendable, Codable {
    case increaseLeft
    case decreaseRight
}

@Sendable package func levelsReducer(_ state: Levels, _ event: LevelsEvent) -> Levels {
    var state = state
    switch event {
    case .increaseLeft: state.left += 1
    case .decreaseRight: state.right -= 1
    }
    return state
}

@Sendable package func leftEffect(_ state: Levels) -> LevelsEvent? {
    state.left < state.right ? .increaseLeft : nil
}

@Sendable package func rightEffect(_ state: Levels) -> LevelsEvent? {
    state.left < state.right ? .decreaseRight : nil
}
