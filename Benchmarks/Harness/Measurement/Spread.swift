/// The median, minimum and maximum of one figure over the repetitions.
struct Spread<Value: Comparable & Sendable>: Sendable {
    var median: Value
    var min: Value
    var max: Value

    /// - Precondition: `values` is not empty.
    init(_ values: [Value], middle: (Value, Value) -> Value) {
        precondition(!values.isEmpty, "a spread needs at least one value")
        let sorted = values.sorted()
        min = sorted[0]
        max = sorted[sorted.count - 1]
        let half = sorted.count / 2
        median = sorted.count % 2 == 1 ? sorted[half] : middle(sorted[half - 1], sorted[half])
    }
}

extension Spread where Value == Double {
    init(_ values: [Double]) {
        self.init(values) { ($0 + $1) / 2 }
    }
}

extension Spread where Value == UInt64 {
    init(_ values: [UInt64]) {
        self.init(values) { $0 / 2 + $1 / 2 + ($0 % 2 + $1 % 2) / 2 }
    }
}
