import ArgumentParser
import Foundation

/// `swift run -c release benchmarks`: every scenario on every engine, side by
/// side in one run, with the ratio to the pure-Swift baseline.
@main
struct BenchmarksCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "benchmarks",
        abstract: "Spindle's throughput, latency and allocation benchmarks, each engine side by side with the pure-Swift baseline.",
        discussion: """
            Each scenario runs on each engine: one warm-up run (a quarter size), then K \
            repetitions in rotating engine order, each on a fresh loop. Every figure is the \
            median of the K repetitions, with min and max; "vs baseline" is the ratio to the \
            baseline engine's median in the same run. Producers are OS threads, created \
            before the clock and released together by a start gate.

            \(ScenarioCatalog.helpText)
            MEASUREMENTS:
              events/s      the scenario's events (see above) / measured region
              latency       HdrHistogram, 1 ns – 100 s, 3 significant digits
              allocs/event  allocator calls (malloc, calloc, realloc,
                            posix_memalign, aligned_alloc, …) of all threads in
                            the measured region / events; glibc only, else n/a
              peak RSS      VmHWM of /proc/self/status after each repetition,
                            reset before it by malloc_trim(0) and writing "5"
                            to /proc/self/clear_refs; the whole process; in
                            parentheses the growth over the RSS at its start
            """)

    @Option(name: .customLong("scenario"), help: ArgumentHelp(
        "Run only this scenario (repeatable). Default: all.", valueName: "name"))
    var scenarioNames: [String] = []

    @Option(name: .customLong("engine"), help: ArgumentHelp(
        "Run only this engine, e.g. lockfree, bounded, baseline, pool or dispatch (repeatable; an unknown name lists them all). Default: all.", valueName: "name"))
    var engineNames: [String] = []

    @Option(help: ArgumentHelp("Size N of every scenario (default: each scenario's own N).", valueName: "N"))
    var events: Int?

    @Option(help: ArgumentHelp("Measured repetitions per scenario and engine (default 5; 3 with --quick).", valueName: "K"))
    var repetitions: Int?

    @Flag(help: "Smoke sizes (each scenario's quick N, 3 repetitions): the whole run takes well under a minute.")
    var quick = false

    @Option(help: ArgumentHelp("Write the results as a JSON array to PATH.", valueName: "path"))
    var json: String?

    @Option(help: ArgumentHelp("Write the results as a Markdown table (as in Benchmarks/Results/latest.md) to PATH.", valueName: "path"))
    var markdown: String?

    @Option(help: ArgumentHelp("Write an SVG bar chart of events/s per scenario and engine to PATH.", valueName: "path"))
    var chart: String?

    func validate() throws {
        for name in scenarioNames where ScenarioCatalog.named(name) == nil {
            throw ValidationError("unknown scenario '\(name)'; scenarios: \(ScenarioCatalog.names.joined(separator: ", "))")
        }
        for name in engineNames where Engine(rawValue: name) == nil {
            throw ValidationError("unknown engine '\(name)'; engines: \(Engine.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        if let events, !(1...1_000_000_000).contains(events) {
            throw ValidationError("--events must be between 1 and 1,000,000,000")
        }
        if let repetitions, repetitions < 1 {
            throw ValidationError("--repetitions must be at least 1")
        }
    }

    mutating func run() async throws {
        let scenarios = scenarioNames.isEmpty
            ? ScenarioCatalog.all
            : ScenarioCatalog.all.filter { scenarioNames.contains($0.name) }
        let engines = engineNames.isEmpty
            ? Engine.allCases
            : Engine.allCases.filter { engineNames.contains($0.rawValue) }
        let plan = RunPlan(
            scenarios: scenarios, engines: engines,
            repetitions: repetitions ?? (quick ? 3 : 5), events: events, quick: quick)
        let context = RunContext(
            command: (["benchmarks"] + CommandLine.arguments.dropFirst()).joined(separator: " "),
            repetitions: plan.repetitions, quick: quick)

        let started = MonotonicClock.now()
        let results = try await Runner(plan: plan, progress: Self.progress).run()
        Self.progress(String(format: "done in %.1f s", Double(MonotonicClock.now() - started) / 1e9))

        FileHandle.standardOutput.write(Data(ConsoleReport.render(results, context: context).utf8))
        if let json {
            try JSONReport.render(results, context: context).write(to: URL(fileURLWithPath: json))
            Self.progress("wrote \(json)")
        }
        if let markdown {
            try MarkdownReport.render(results, context: context).write(toFile: markdown, atomically: true, encoding: .utf8)
            Self.progress("wrote \(markdown)")
        }
        if let chart {
            try SVGChart.render(results, context: context).write(toFile: chart, atomically: true, encoding: .utf8)
            Self.progress("wrote \(chart)")
        }
    }

    private static func progress(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
