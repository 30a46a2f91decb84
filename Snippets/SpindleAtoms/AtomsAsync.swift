// Asynchronous atoms: a task and its phase, a refresh, a throwing task
// that depends on a state atom, and the elements of an async sequence.
// Each waits for the value it needs with `for await`, never a sleep.

// snippet.hide
import SpindleAtoms
import Synchronization

/// The async work of the example: a network call in an application.
func fetchForecast(for city: String) async -> String {
    await Task.yield()
    return "Sunny in \(city)"
}

/// What the `for await` loops saw.
let seen = Mutex<[String]>([])
func see(_ line: String) { seen.withLock { $0.append(line) } }
func takeSeen() -> [String] { seen.withLock { lines in defer { lines = [] }; return lines } }
// snippet.show

// snippet.task
struct ForecastAtom: TaskAtom, Hashable {
    let city: String   // a parameter: each city is an atom of its own

    func value(context: Context) async -> String {
        await fetchForecast(for: city)
    }
}

let store = AtomStore()

// The task's phase: .suspending, then .success.
for await phase in try store.values(of: ForecastAtom(city: "Paris").phase) {
    // snippet.hide
    see(phase.value ?? "suspending")
    // snippet.show
    if let forecast = phase.value {
        print(forecast)   // Sunny in Paris
        break
    }
}

// A refresh starts a new task now (cancelling the old one) and returns it.
let watched = try store.watch(ForecastAtom(city: "Oslo")) { _ in }
let again = try store.refresh(ForecastAtom(city: "Oslo"))
print(await again.value)   // Sunny in Oslo
watched.cancel()
// snippet.end

// snippet.hide
precondition(takeSeen() == ["suspending", "Sunny in Paris"], "the phase: suspending, then the value")
precondition(again != watched.initialValue, "the refresh made a new task")
precondition(watched.initialValue.isCancelled, "and cancelled the old one")
// snippet.show

// snippet.throwing
enum ForecastError: Error { case noCity }

struct CityAtom: StateAtom, Hashable {
    func defaultValue(context: Context) -> String { "Paris" }
}

struct CityForecastAtom: ThrowingTaskAtom, Hashable {
    func value(context: Context) async throws -> String {
        let city = try context.watch(CityAtom())   // a new city: a new task
        guard !city.isEmpty else { throw ForecastError.noCity }
        return await fetchForecast(for: city)
    }
}

for await phase in try store.values(of: CityForecastAtom().phase) {
    // snippet.hide
    see(phase.value ?? phase.error.map { "\($0)" } ?? "suspending")
    // snippet.show
    if let forecast = phase.value {
        print(forecast)                       // Sunny in Paris
        try store.set("", for: CityAtom())    // the task runs again, and throws
    } else if let error = phase.error {
        print("no forecast:", error)          // no forecast: noCity
        break
    }
}
// snippet.end

// snippet.hide
precondition(takeSeen() == ["suspending", "Sunny in Paris", "suspending", "noCity"], "a new task, which failed")
// snippet.show

// snippet.sequence
struct PricesAtom: AsyncSequenceAtom, Hashable {
    func sequence(context: Context) -> AsyncStream<Int> {
        AsyncStream { continuation in
            for price in [101, 103, 102] { continuation.yield(price) }
            continuation.finish()
        }
    }
}

// .suspending until the first element, then each element as it comes.
for await phase in try store.values(of: PricesAtom()) {
    // snippet.hide
    see(phase.value.map { "\($0)" } ?? "suspending")
    // snippet.show
    guard let price = phase.value else { continue }
    print("price:", price)
    if price == 102 { break }
}
// snippet.end

// snippet.hide
precondition(takeSeen() == ["suspending", "101", "103", "102"], "every element, in order")
// A sequence of values(of:) keeps its atom in use until it is released:
// in a function, when the loop that iterates it ends. (The top-level loops
// above may keep theirs until the program ends.)
func forecast(for city: String) async throws -> String? {
    for await phase in try store.values(of: ForecastAtom(city: city).phase) {
        if let forecast = phase.value { return forecast }
    }
    return nil
}
let rome = try await forecast(for: "Rome")
precondition(rome == "Sunny in Rome")
let atoms = try store.snapshot().atoms
precondition(!atoms.contains { $0.contains("Rome") }, "released with its sequence: \(atoms)")
precondition(atoms.contains("CityAtom()"), "kept alive")
store.close()
// snippet.show
