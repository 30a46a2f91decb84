import Spindle

/// The states a stream feedback reads under a runner (see
/// `Feedback(streamEffect:)`): an unbounded FIFO the runner yields to, read
/// through an `AsyncStream`.
///
/// While the run waits for the next state, its ``RunTag`` is parked: the run
/// is waiting for the test (to send an event), not for the outside world.
/// Finishing the source, or cancelling the reading task, ends the stream.
///
/// **Thread safety:** any method, any thread; the buffer is behind a lock.
final class StateSource<State: Sendable>: Sendable {
    private struct Buffer: Sendable {
        var states: [State] = []
        var finished = false
        var waiter: CheckedContinuation<State?, Never>?
    }

    // protected by lock: the states not read yet, and the waiting reader.
    private let buffer = Lock(Buffer())

    /// The stream the feedback's effect reads.
    var stream: AsyncStream<State> {
        AsyncStream(unfolding: { [self] in await next() })
    }

    /// Hands `state` to the reader (or buffers it). Ignored once finished.
    func yield(_ state: State) {
        let waiter = buffer.withLock { buffer -> CheckedContinuation<State?, Never>? in
            guard !buffer.finished else { return nil }
            if let waiter = buffer.waiter {
                buffer.waiter = nil
                return waiter
            }
            buffer.states.append(state)
            return nil
        }
        waiter?.resume(returning: state)
    }

    /// Ends the stream at once: the reader gets nil, states not read yet are
    /// dropped (as when the engine's stop cancels the reading task).
    func finish() {
        let waiter = buffer.withLock { buffer -> CheckedContinuation<State?, Never>? in
            buffer.finished = true
            buffer.states.removeAll()
            defer { buffer.waiter = nil }
            return buffer.waiter
        }
        waiter?.resume(returning: nil)
    }

    private func next() async -> State? {
        await RunTag.parking {
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<State?, Never>) in
                    let answer = buffer.withLock { buffer -> State?? in
                        if !buffer.states.isEmpty { return .some(buffer.states.removeFirst()) }
                        if buffer.finished { return .some(nil) }
                        buffer.waiter = continuation
                        return nil
                    }
                    if let answer { continuation.resume(returning: answer) }
                }
            } onCancel: {
                finish()
            }
        }
    }
}
