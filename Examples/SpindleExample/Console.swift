/// Prints the example's output: one labelled line each, with the time since
/// the program started. `print` is safe from any thread.
enum Console {
    /// When the clock started: set by the first use (`main` touches it first).
    static let start = ContinuousClock.now

    static func line(_ who: String, _ text: String) {
        let elapsed = ContinuousClock.now - start
        let millis = Int(elapsed / .milliseconds(1))
        let seconds = "\(millis / 1000).\(String(millis % 1000 + 1000).dropFirst())s"
        let label = who + String(repeating: " ", count: max(0, 8 - who.count))
        print("[\(seconds)] \(label)| \(text)")
    }
}
