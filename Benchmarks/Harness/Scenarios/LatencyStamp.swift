/// A latency scenario's event: the monotonic time at which it was emitted.
enum StampEvent: Sendable {
    case stamped(sentAt: UInt64)
}

/// A latency scenario's state: the stamp of the last event reduced, and how
/// many were reduced.
struct StampState: Sendable, Equatable {
    var sentAt: UInt64 = 0
    var received = 0

    static func reduce(_ state: StampState, _ event: StampEvent) -> StampState {
        switch event {
        case .stamped(let sentAt): StampState(sentAt: sentAt, received: state.received + 1)
        }
    }
}
