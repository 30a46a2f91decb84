/// A failed spec: an error whose description says what was given, what
/// happened, and what was expected, readable as it stands in a test log.
///
/// The specs throw it instead of calling a test framework, so they work the
/// same from Swift Testing and XCTest: Swift Testing records a thrown error
/// as an issue with its message; a throwing XCTest method fails with it, as
/// does `XCTAssertNoThrow(try ...)`.
///
/// @Snippet(path: "Spindle/Snippets/SpindleTesting/TestingReducerSpecs", slice: "spec")
///
/// A failure's ``message``:
///
/// @Snippet(path: "Spindle/Snippets/SpindleTesting/TestingReducerSpecs", slice: "failure")
///
/// **Thread safety:** a value type; `Sendable`.
public struct SpecFailure: Error, Sendable, CustomStringConvertible {
    /// The whole readable report (also ``description``).
    public let message: String
    /// The file of the `then…` call that failed (`#fileID`).
    public let fileID: String
    /// The line of the `then…` call that failed.
    public let line: Int

    /// Creates a failure with a ready-made message.
    public init(message: String, fileID: String = #fileID, line: Int = #line) {
        self.message = message
        self.fileID = fileID
        self.line = line
    }

    public var description: String { "\(fileID):\(line): \(message)" }
}

/// How specs print values and differences.
enum Rendering {
    /// A value as `dump` prints it: every stored property, one per line.
    static func lines<T>(_ value: T) -> [String] {
        var text = ""
        dump(value, to: &text)
        return text.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
    }

    /// A value on one line when it reads well so, as `dump` lines otherwise.
    static func block<T>(_ value: T, indent: String = "  ") -> String {
        let short = String(describing: value)
        if short.count <= 100, !short.contains("\n") { return indent + short }
        return lines(value).map { indent + $0 }.joined(separator: "\n")
    }

    /// Values as an array literal: `[fetch("a"), log("b")]`.
    static func list<T>(_ values: [T]) -> String {
        "[" + values.map { String(describing: $0) }.joined(separator: ", ") + "]"
    }

    /// "<label>:" and the value's block, for a failure's extra text.
    static func labeled<T>(_ label: String, _ value: T) -> String {
        "\(label):\n\(block(value))\n"
    }

    /// The headed line diff of two values, for a failure's extra text.
    static func difference<T>(expected: T, actual: T) -> String {
        "difference (− expected, + actual):\n\(diff(expected: expected, actual: actual))\n"
    }

    /// A line diff of two values' `dump` output: common lines are elided,
    /// `−` marks a line only in `expected`, `+` one only in `actual`.
    static func diff<T>(expected: T, actual: T, indent: String = "  ") -> String {
        let old = lines(expected)
        let new = lines(actual)
        // Longest common subsequence table; states are small, so O(n·m) is fine.
        var table = Array(repeating: Array(repeating: 0, count: new.count + 1), count: old.count + 1)
        for i in stride(from: old.count - 1, through: 0, by: -1) {
            for j in stride(from: new.count - 1, through: 0, by: -1) {
                table[i][j] = old[i] == new[j] ? table[i + 1][j + 1] + 1 : max(table[i + 1][j], table[i][j + 1])
            }
        }
        var out: [String] = []
        var i = 0
        var j = 0
        while i < old.count || j < new.count {
            if i < old.count, j < new.count, old[i] == new[j] {
                i += 1
                j += 1
            } else if i < old.count, j == new.count || table[i + 1][j] >= table[i][j + 1] {
                out.append(indent + "− " + old[i])
                i += 1
            } else {
                out.append(indent + "+ " + new[j])
                j += 1
            }
        }
        return out.joined(separator: "\n")
    }
}
