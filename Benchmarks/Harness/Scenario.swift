import Spindle

/// What one repetition of a scenario is asked to do.
struct ScenarioRun: Sendable {
    let scenario: String
    let engine: Engine
    /// The scenario's size (see its description for what it counts).
    let events: Int
    /// The bounded queue's capacity (`Engine.bounded`).
    let boundedCapacity: Int
    /// How long any wait inside the run may take before it fails.
    let timeout: Duration
    /// A `--quick` run: a scenario whose shape is sized apart from its N
    /// (`atoms-propagate`'s graph) takes its smoke shape.
    var quick = false
}

extension ScenarioRun {
    /// The options of a loop of `Event`s on this run's engine (the baseline
    /// queue is specialized for `Event`: see `BaselineQueue`).
    func options<Event: Sendable>(for eventType: Event.Type) -> SpinOptions {
        engine.options(boundedCapacity: boundedCapacity, for: eventType)
    }
}

/// What one repetition measured.
struct Sample: Sendable {
    /// Events the rate is computed over (see the scenario's description).
    var events: Int
    /// Length of the measured region.
    var elapsedNanoseconds: UInt64
    /// Allocator calls in the measured region (nil: not supported here).
    var allocations: AllocationCount?
    /// Latency percentiles, for the latency scenarios.
    var latency: LatencySummary? = nil
    /// Scenario-specific counts (e.g. cancel-storm's effect runs).
    var counters: [String: Int] = [:]
    /// Scenario-specific figures that are not counts (e.g. recomputations
    /// per set, a ratio).
    var figures: [String: Double] = [:]
    /// Peak RSS during the run, and RSS when it started (after the reset);
    /// filled in by the runner.
    var peakRSSBytes: Int? = nil
    var startRSSBytes: Int? = nil

    var eventsPerSecond: Double {
        Double(events) / (Double(max(elapsedNanoseconds, 1)) / 1e9)
    }
}

/// A benchmark scenario: its interface name, what it measures, and how.
struct Scenario: Sendable {
    /// The name used by `--scenario` and in every report (part of the interface).
    let name: String
    /// Producer threads (1 for scenarios driven by one producer or by feedback).
    let producers: Int
    /// What it does and how the clock and counts are taken (for `--help`).
    let description: String
    /// Size of a full run, and of a `--quick` run.
    let defaultEvents: Int
    let quickEvents: Int
    /// Capacity of the `ring` engine's queue.
    var boundedCapacity: Int = 65_536
    /// The engines this scenario runs, in report order.
    var engines: [Engine] = Engine.queues
    /// The engine every ratio of this scenario is read against (nil: none).
    var yardstick: Engine? = .baseline
    /// Runs one repetition (a fresh loop each time).
    let measure: @Sendable (ScenarioRun) async throws -> Sample
}
