import Spindle

/// The recorder crash tests' state (Tests/RecorderCrashChild records it,
/// Tests/SpindleObservabilityTests/RecorderCrashTests checks it): each
/// value depends on every event and its order, so a replay that lost,
/// repeated or reordered an event cannot reach the same states.
package struct Tally: Codable, Sendable, Equatable {
    package var count = 0
    package var sum = 0
    package var digest: UInt64 = 14_695_981_039_346_656_037

    package init() {}
}

/// The child's reducer: FNV-1a over the events, with their count and sum.
package let tallyReducer = Reducer<Tally, Int> { state, event in
    var state = state
    state.count += 1
    state.sum += event
    state.digest = (state.digest ^ UInt64(event)) &* 1_099_511_628_211
    return state
}

/// The states the child's loop goes through: it emits 1, 2, 3… from one
/// thread, so reduction k reduces event k. The initial state first.
package func expectedTallies(through count: Int) -> [Tally] {
    var states = [Tally()]
    var state = Tally()
    for event in 1...max(count, 1) where event <= count {
        state = tallyReducer.reduce(state, event)
        states.append(state)
    }
    return states
}
