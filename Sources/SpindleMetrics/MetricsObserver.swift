#if !SpindleMetrics
#error("SpindleMetrics needs swift-metrics, which this package uses only with its trait SpindleMetrics on: add it to the package's traits (.package(url: …, traits: [\"SpindleMetrics\"]))")
#endif
import CoreMetrics
import Spindle

/// A `SpinObserver` that reports a loop to swift-metrics: counters for its
/// events and effect runs, a gauge for its queue depth, and a timer for its
/// reductions.
///
/// | metric | kind | what |
/// | --- | --- | --- |
/// | `<prefix>_events_reduced` | counter | events reduced (added once per batch) |
/// | `<prefix>_events_dropped` | counter | events refused by a full bounded queue (`.dropNewest`) |
/// | `<prefix>_events_rejected` | counter | events emitted after stop |
/// | `<prefix>_events_discarded` | counter | events thrown away, with the dimension `reason`: `stop` (a discarding stop) or `cancelled_run` (a late event of a cancelled run) |
/// | `<prefix>_effects_started` | counter | effect runs started |
/// | `<prefix>_effects_cancelled` | counter | effect runs cancelled (new state or stop) |
/// | `<prefix>_effects_failed` | counter | effect runs that threw |
/// | `<prefix>_queue_depth` | gauge | events accepted and not yet reduced, set after each batch |
/// | `<prefix>_reduction_duration` | timer | the mean time of one reduction in each batch (the batch's time divided by its events), recorded once per batch |
/// | `<prefix>_batch_size` | recorder | events per batch |
///
/// Every metric carries the `dimensions` given at creation (to tell loops
/// apart, say `[("loop", "checkout")]`).
///
/// @Snippet(path: "Spindle/Snippets/SpindleMetrics/SpindleMetricsObserver", slice: "observer")
///
/// > Important: The observer does not ask for each event
/// > (``observesEachEvent`` is false): the reducer thread pays
/// > two clock reads and a few metric updates per batch, not per event. The
/// > timer records a per-batch mean: it shows how the reducer's cost moves,
/// > not the spread of single reductions.
///
/// **Thread safety:** any thread; swift-metrics backends do their own
/// locking.
public struct MetricsObserver<State: Sendable, Event: Sendable>: SpinObserver {
    private let reduced: Counter
    private let dropped: Counter
    private let rejected: Counter
    private let discardedAtStop: Counter
    private let discardedLate: Counter
    private let effectsStarted: Counter
    private let effectsCancelled: Counter
    private let effectsFailed: Counter
    private let queueDepth: Gauge
    private let reductionDuration: Timer
    private let batchSize: Recorder

    /// Creates the loop's metrics.
    /// - Parameters:
    ///   - prefix: the start of every metric's label. Default `spindle`.
    ///   - dimensions: added to every metric.
    ///   - factory: the metrics backend. Default: the one bootstrapped with
    ///     `MetricsSystem.bootstrap` (a test passes its own, such as
    ///     MetricsTestKit's `TestMetrics`).
    public init(
        prefix: String = "spindle",
        dimensions: [(String, String)] = [],
        factory: (any MetricsFactory)? = nil
    ) {
        let factory = factory ?? MetricsSystem.factory
        func counter(_ name: String, _ extra: [(String, String)] = []) -> Counter {
            Counter(label: "\(prefix)_\(name)", dimensions: dimensions + extra, factory: factory)
        }
        reduced = counter("events_reduced")
        dropped = counter("events_dropped")
        rejected = counter("events_rejected")
        discardedAtStop = counter("events_discarded", [("reason", "stop")])
        discardedLate = counter("events_discarded", [("reason", "cancelled_run")])
        effectsStarted = counter("effects_started")
        effectsCancelled = counter("effects_cancelled")
        effectsFailed = counter("effects_failed")
        queueDepth = Gauge(label: "\(prefix)_queue_depth", dimensions: dimensions, factory: factory)
        reductionDuration = Timer(label: "\(prefix)_reduction_duration", dimensions: dimensions, factory: factory)
        batchSize = Recorder(label: "\(prefix)_batch_size", dimensions: dimensions, factory: factory)
    }

    public var observesEachEvent: Bool { false }

    public func batchReduced(_ batch: ReductionBatch) {
        reduced.increment(by: batch.events)
        queueDepth.record(batch.queueDepth)
        batchSize.record(batch.events)
        let nanoseconds = batch.duration.components.seconds * 1_000_000_000
            + batch.duration.components.attoseconds / 1_000_000_000
        reductionDuration.recordNanoseconds(nanoseconds / Int64(max(batch.events, 1)))
    }

    public func eventDropped(_ event: Event) { dropped.increment() }
    public func eventRejected(_ event: Event) { rejected.increment() }
    public func eventDiscardedAtStop(_ event: Event) { discardedAtStop.increment() }
    public func lateEventDiscarded(_ event: Event, from run: EffectRun) { discardedLate.increment() }
    public func effectStarted(_ run: EffectRun) { effectsStarted.increment() }
    public func effectCancelled(_ run: EffectRun) { effectsCancelled.increment() }
    public func effectFailed(_ run: EffectRun, error: any Error) { effectsFailed.increment() }
}
