import Spindle

/// What to run: the scenarios, engines, sizes and repetitions.
struct RunPlan: Sendable {
    var scenarios: [Scenario]
    var engines: [Engine]
    var repetitions: Int
    /// Overrides every scenario's size when set.
    var events: Int?
    var quick: Bool

    func events(for scenario: Scenario) -> Int {
        events ?? (quick ? scenario.quickEvents : scenario.defaultEvents)
    }
}

/// Runs a plan: per scenario, one warm-up run per engine (a quarter of the
/// size, not recorded), then `repetitions` rounds in which every engine runs
/// once — the engine order rotates each round, so slow phases of a noisy
/// machine spread over all engines instead of hitting one. Each run gets a
/// fresh loop; peak RSS is reset before and read after each run.
struct Runner {
    let plan: RunPlan
    /// Progress lines (to stderr), so a long run shows what it is doing.
    let progress: (String) -> Void

    func run() async throws -> [ResultRow] {
        var rows: [ResultRow] = []
        for scenario in plan.scenarios {
            let events = plan.events(for: scenario)
            let timeout = Duration.seconds(max(120, events / 10_000))
            func runOnce(_ engine: Engine, size: Int) async throws -> Sample {
                let run = ScenarioRun(
                    scenario: scenario.name, engine: engine, events: size,
                    boundedCapacity: scenario.boundedCapacity,
                    timeout: timeout, quick: plan.quick)
                PeakMemory.reset()
                let startRSS = PeakMemory.resident()
                var sample = try await scenario.measure(run)
                sample.peakRSSBytes = PeakMemory.highWaterMark()
                sample.startRSSBytes = startRSS
                return sample
            }

            let engines = scenario.engines.filter(plan.engines.contains)
            if engines.isEmpty { continue }
            progress("\(scenario.name): warm-up")
            for engine in engines {
                _ = try await runOnce(engine, size: max(1, events / 4))
            }
            var samples: [Engine: [Sample]] = [:]
            for round in 0..<plan.repetitions {
                let shift = round % engines.count
                let order = Array(engines[shift...] + engines[..<shift])
                var line = "\(scenario.name): repetition \(round + 1)/\(plan.repetitions)"
                for engine in order {
                    let sample = try await runOnce(engine, size: events)
                    samples[engine, default: []].append(sample)
                    line += "  \(engine.rawValue) \(Format.rate(sample.eventsPerSecond))"
                }
                progress(line)
            }
            var scenarioRows = engines.map { engine in
                ResultRow(scenario: scenario, engine: engine, samples: samples[engine] ?? [])
            }
            let baseline = scenarioRows.first { $0.engine == scenario.yardstick?.rawValue }?.eventsPerSecond.median
            let yardstickSamples = scenario.yardstick.flatMap { samples[$0] } ?? []
            for index in scenarioRows.indices {
                scenarioRows[index].ratioToBaseline = baseline.map { scenarioRows[index].eventsPerSecond.median / $0 }
                // Sample k of every engine ran in round k.
                let own = samples[engines[index]] ?? []
                let pairs = zip(own, yardstickSamples).map { $0.eventsPerSecond / $1.eventsPerSecond }
                if !pairs.isEmpty, engines[index] != scenario.yardstick {
                    scenarioRows[index].pairedRatio = Spread(pairs)
                    let latencies = own.compactMap(\.latency)
                    let yardstickLatencies = yardstickSamples.compactMap(\.latency)
                    // Only when every round has both: a missing one would pair the wrong rounds.
                    if latencies.count == own.count, yardstickLatencies.count == yardstickSamples.count {
                        scenarioRows[index].pairedLatency = PairedLatency(own: latencies, yardstick: yardstickLatencies)
                    }
                }
            }
            rows += scenarioRows
        }
        return rows
    }
}
