/// A scenario saw the engine break its contract (lost, invented or
/// reordered events), or waited too long. The run stops with this message
/// and a non-zero exit status: a benchmark that measures a broken run
/// measures nothing.
struct BenchmarkFailure: Error, CustomStringConvertible {
    let scenario: String
    let engine: String
    let message: String

    var description: String { "\(scenario) on \(engine): \(message)" }
}

/// Throws a ``BenchmarkFailure`` unless `condition` holds.
func expect(
    _ condition: Bool, _ message: @autoclosure () -> String, in run: ScenarioRun
) throws {
    if !condition {
        throw BenchmarkFailure(scenario: run.scenario, engine: run.engine.rawValue, message: message())
    }
}
