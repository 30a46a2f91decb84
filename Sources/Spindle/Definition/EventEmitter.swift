/// Hands the events of an effect handler back to its loop: the handle an
/// emitting route's handler gets (see
/// ``EffectRouter/route(_:on:emitting:)``).
///
/// > Important: Once the loop stops, ``emit(_:)`` answers
/// > ``EmitResult/stopped`` and the event is never reduced (the loop counts
/// > it in ``LoopStatistics/lateEventsDiscarded`` or
/// > ``LoopStatistics/rejectedAfterStop``). A handler emitting a sequence
/// > should end when it sees that answer.
///
/// Events one handler emits in sequence are reduced in that order.
///
/// Thread safety: any thread, any time, including concurrently with stop.
public struct EventEmitter<Event: Sendable>: Sendable {
    let send: @Sendable (Event) -> EmitResult

    init(_ send: @escaping @Sendable (Event) -> EmitResult) {
        self.send = send
    }

    /// Sends `event` to the loop.
    /// - Returns: ``EmitResult/accepted`` (it will be reduced),
    ///   ``EmitResult/dropped`` (a full bounded queue under
    ///   ``OverflowPolicy/dropNewest``), or ``EmitResult/stopped``.
    @discardableResult
    public func emit(_ event: Event) -> EmitResult {
        send(event)
    }
}
