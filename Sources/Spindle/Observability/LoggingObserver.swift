import Logging

/// A ``SpinObserver`` that writes a loop's life to a swift-log `Logger`.
///
/// Each reduction is logged at the chosen `level` as
/// `reduced #N: <event> -> <new state>`, with the metadata `reduction`;
/// effect runs (started, cancelled, finished) are logged at the same level,
/// with the metadata `feedback` and `run`. Events the loop refuses or throws
/// away (dropped by a full queue, emitted after stop, discarded at stop or
/// by a cancelled run) are logged at `.warning`; effects that throw, and a
/// loop that cannot start (with its ``SpinExecutorError``), at `.error`. Events and states are printed with `String(describing:)`.
///
/// @Snippet(path: "Spindle/Snippets/Spindle/ObservingALoop", slice: "logging")
///
/// > Important: When the logger's `logLevel` is above `level`, nothing is
/// > formatted and the loop skips the per-event call entirely; the logger's
/// > level is read once, when the observer is created.
///
/// **Thread safety:** any thread; swift-log handlers do their own locking.
public struct LoggingObserver<State: Sendable, Event: Sendable>: SpinObserver {
    /// The logger written to.
    public let logger: Logger
    /// The level of reductions and effect runs.
    public let level: Logger.Level
    private let logsEvents: Bool

    /// Creates an observer that logs to `logger`.
    /// - Parameters:
    ///   - logger: where to log; its `logLevel` decides what is written.
    ///   - level: the level of reductions and effect runs. Default `.debug`.
    public init(logger: Logger, level: Logger.Level = .debug) {
        self.logger = logger
        self.level = level
        self.logsEvents = logger.logLevel <= level
    }

    public var observesEachEvent: Bool { logsEvents }

    public func loopStarted(initialState: State) {
        logger.log(level: level, "loop started: \(String(describing: initialState))")
    }

    public func loopFailedToStart(_ error: SpinExecutorError) {
        logger.error("loop failed to start: \(error)")
    }

    public func eventReduced(_ event: Event, newState: State, reduction: Int) {
        logger.log(
            level: level, "reduced #\(reduction): \(String(describing: event)) -> \(String(describing: newState))",
            metadata: ["reduction": "\(reduction)"])
    }

    public func eventDropped(_ event: Event) {
        logger.warning("dropped by a full queue: \(String(describing: event))")
    }

    public func eventRejected(_ event: Event) {
        logger.warning("emitted after stop, refused: \(String(describing: event))")
    }

    public func eventDiscardedAtStop(_ event: Event) {
        logger.warning("discarded at stop: \(String(describing: event))")
    }

    public func effectStarted(_ run: EffectRun) {
        logger.log(level: level, "effect started", metadata: metadata(run))
    }

    public func effectCancelled(_ run: EffectRun) {
        logger.log(level: level, "effect cancelled", metadata: metadata(run))
    }

    public func effectFinished(_ run: EffectRun) {
        logger.log(level: level, "effect finished", metadata: metadata(run))
    }

    public func effectFailed(_ run: EffectRun, error: any Error) {
        logger.error("effect threw: \(String(describing: error))", metadata: metadata(run))
    }

    public func lateEventDiscarded(_ event: Event, from run: EffectRun) {
        logger.warning(
            "late event of a cancelled run, discarded: \(String(describing: event))", metadata: metadata(run))
    }

    public func loopStopped(_ report: StopReport) {
        logger.log(level: level, "loop stopped: \(report.reduced) reduced, \(report.discarded) discarded")
    }

    private func metadata(_ run: EffectRun) -> Logger.Metadata {
        ["feedback": "\(run.feedbackIndex)", "run": "\(run.id)"]
    }
}
