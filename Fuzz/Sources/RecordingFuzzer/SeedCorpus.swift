import Dispatch
import Foundation
import Spindle
import SpindleReplay
import Synchronization

/// Writes the seed corpus to `directory`: small recordings made by the real
/// `SpinRecorder`, so that the fuzzer starts from the bytes the recorder
/// actually writes (key order, escaping, number formats) rather than from
/// hand-written guesses. Times differ from run to run; everything else is
/// the same.
func writeSeedCorpus(to directory: URL) {
    runToCompletion {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        func save(_ recording: Data, as name: String) throws {
            try recording.write(to: directory.appendingPathComponent(name))
            print("wrote \(name) (\(recording.count) bytes)")
        }
        let complete = try await record(shopping, from: Cart(), through: cartReducer)
        try save(complete, as: "complete.jsonl")
        // What a crash leaves: every line up to the last reduction, no footer.
        try save(droppingLastLine(of: complete), as: "cut-short.jsonl")
        try save(try await record(shopping, from: CartSummary(), through: summaryReducer),
                 as: "state-not-encodable.jsonl")
        try save(try await record(unicodeShopping, from: Cart(), through: cartReducer), as: "unicode.jsonl")
        try save(try await record([], from: Cart(), through: cartReducer), as: "no-events.jsonl")
    }
}

private let shopping: [CartEvent] = [
    .add(item: "apple", quantity: 3),
    .add(item: "pear", quantity: 1),
    .applyCoupon(code: "SPRING", percent: 12.5),
    .deliver(to: Address(street: "1 Loop Road", city: "Spinville", postcode: nil)),
    .annotate(nil),
    .annotate("ring the bell"),
    .remove(item: "pear"),
    .add(item: "apple", quantity: -1),
    .checkout,
]

// Multi-byte UTF-8, combining marks, right-to-left text, and the characters
// JSON must escape (a newline would otherwise split a line of the recording).
private let unicodeShopping: [CartEvent] = [
    .add(item: "café crème", quantity: 2),
    .add(item: "e\u{301}clair", quantity: 1),
    .add(item: "日本茶", quantity: 1),
    .add(item: "🧵 spindle 👩🏽‍🔧", quantity: 1),
    .remove(item: "שלום"),
    .deliver(to: Address(street: "Bahnhofstraße 1", city: "Zürich", postcode: "8001")),
    .deliver(to: Address(street: "Тверская 7", city: "Москва", postcode: nil)),
    .annotate("two\nlines\tand a \"quote\", a \\ and a \u{0} NUL"),
    .annotate("line\u{2028}separator and \u{FEFF}BOM"),
    .applyCoupon(code: "ΩMEGA", percent: 0.1),
    .checkout,
]

/// Runs `events` through a loop observed by a `SpinRecorder` and returns
/// what the recorder wrote once the loop stopped.
private func record<State: Sendable>(
    _ events: [CartEvent], from initialState: State, through reducer: Reducer<State, CartEvent>
) async throws -> Data {
    let written = Shared(Data())
    let recorder = SpinRecorder<State, CartEvent>(writer: { lines in written.update { $0.append(lines) } })
    let loop = try Spin(initialState: initialState, feedbacks: [], reducer: reducer).observed(by: recorder).start()
    for event in events { loop.emit(event) }
    await loop.stop()
    try await recorder.waitUntilWritten()
    return written.value
}

private func droppingLastLine(of recording: Data) -> Data {
    var lines = recording.split(separator: 0x0A)
    lines.removeLast()
    return Data(lines.joined(separator: [0x0A])) + [0x0A]
}

/// Runs `work` and waits for it: libFuzzer's initializer is synchronous. The
/// calling thread is libFuzzer's main thread, not one of the tasks' threads,
/// so waiting here cannot starve `work`.
private func runToCompletion(_ work: @escaping @Sendable () async throws -> Void) {
    let failure = Shared<String?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
        do { try await work() } catch { failure.update { $0 = String(describing: error) } }
        done.signal()
    }
    done.wait()
    if let message = failure.value { fatalError("writing the seed corpus failed: \(message)") }
}

/// A value shared between the recorder's queue (or a task) and the caller.
private final class Shared<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    init(_ value: Value) { mutex = Mutex(value) }
    var value: Value { mutex.withLock { $0 } }
    func update(_ change: (inout Value) -> Void) { mutex.withLock { change(&$0) } }
}
