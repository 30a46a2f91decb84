/// Every scenario, in report order. Names are part of the interface.
enum ScenarioCatalog {
    static let all: [Scenario] = [
        ReduceScenario.make(producers: 1),
        ReduceScenario.makeBatch(),
        ReduceScenario.make(producers: 2),
        ReduceScenario.make(producers: 4),
        ReduceScenario.make(producers: 8),
        ReduceScenario.makeObserved(),
        FeedbackLoopScenario.scenario,
        LevelsScenario.scenario,
        FanoutScenario.scenario,
        FanoutScenario.conflated,
        CancelStormScenario.scenario,
        Latency100kScenario.scenario,
        Latency100kScenario.stream,
        LatencyClosedScenario.scenario,
        LatencyClosedObserverScenario.scenario,
        LatencySporadicScenario.sporadic100us,
        LatencySporadicScenario.sporadic1ms,
        LatencySporadicScenario.crowdedClosed,
        LatencySporadicScenario.crowdedSporadic,
        ManyLoopsScenario.make(loops: 10_000),
        ManyLoopsScenario.make(loops: 1_000),
        IdleLoopsScenario.scenario,
        HotAndColdScenario.scenario,
        HTTPHandlerScenario.scenario,
        AtomsPropagateScenario.scenario,
        AtomsDiamondScenario.scenario,
        AtomsChurnScenario.scenario,
        SpinAtomScenario.scenario,
    ]

    static var names: [String] { all.map(\.name) }

    static func named(_ name: String) -> Scenario? {
        all.first { $0.name == name }
    }

    /// The scenario list for `--help`.
    static var helpText: String {
        var text = "SCENARIOS (default N, --quick N):\n"
        for scenario in all {
            text += "\n  \(scenario.name) (N = \(scenario.defaultEvents), quick \(scenario.quickEvents))\n"
            text += wrap(scenario.description, indent: "    ", width: 78) + "\n"
        }
        text += "\nENGINES:\n"
        for engine in Engine.allCases {
            text += "  \(engine.rawValue.padding(toLength: 9, withPad: " ", startingAt: 0)) \(engine.summary)\n"
        }
        return text
    }

    private static func wrap(_ text: String, indent: String, width: Int) -> String {
        var lines: [String] = []
        var line = indent
        for word in text.split(separator: " ") {
            if line.count + word.count + 1 > width, line != indent {
                lines.append(line)
                line = indent
            }
            line += (line == indent ? "" : " ") + word
        }
        lines.append(line)
        return lines.joined(separator: "\n")
    }
}
