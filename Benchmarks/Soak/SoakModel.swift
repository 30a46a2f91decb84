import Spindle

/// The soak's events: a producer's numbered item, or an echo that an effect
/// or a gear sent back into the loop.
enum SoakEvent: Sendable {
    case item(producer: Int, sequence: Int32)
    case echo
}

/// What a gear carries between the soak's loops.
struct SoakPulse: Sendable {}

/// A soak loop's state: enough to check its books when it stops.
///
/// `SIMD4` holds the per-producer sequences inline (an array would be copied
/// on every reduction), hence at most four producers.
struct SoakState: Sendable, Equatable {
    static let maximumProducers = 4

    /// Per producer, the last sequence reduced (1, 2, 3… with no gap).
    var last = SIMD4<Int32>(repeating: 0)
    /// Items that did not follow their producer's previous one.
    var outOfOrder: Int32 = 0
    /// Producers' items reduced.
    var items: Int32 = 0
    /// Echoes (from effects and gears) reduced.
    var echoes: Int32 = 0
    /// Whether the last event reduced was an item: effects answer items
    /// only, so that no echo ever causes another.
    var lastWasItem = false

    static func reduce(_ state: SoakState, _ event: SoakEvent) -> SoakState {
        var next = state
        switch event {
        case .item(let producer, let sequence):
            if sequence != state.last[producer] &+ 1 { next.outOfOrder &+= 1 }
            next.last[producer] = sequence
            next.items &+= 1
            next.lastWasItem = true
        case .echo:
            next.echoes &+= 1
            next.lastWasItem = false
        }
        return next
    }

    /// Every `period`-th item, right after it was reduced.
    func justReducedItem(every period: Int32, offset: Int32 = 0) -> Bool {
        lastWasItem && items % period == offset
    }
}
