import SpindleLevelsFixture

// The levels example comes from SpindleLevelsFixture; the spec and runner
// tests also use this wrong reducer.

/// A deliberately wrong reducer: `.increaseLeft` adds 2.
@Sendable func wrongLevelsReducer(_ state: Levels, _ event: LevelsEvent) -> Levels {
    var state = state
    switch event {
    case .increaseLeft: state.left += 2
    case .decreaseRight: state.right -= 1
    }
    return state
}
