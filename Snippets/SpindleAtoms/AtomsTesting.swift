// Testing atoms: a test context with an override, a watch, and a wait for
// the next update on a signal. In a test target, the same code runs inside
// an `@Test func … async throws`.

// snippet.hide
import SpindleAtoms
// snippet.show

// snippet.context
struct PriceAtom: StateAtom, Hashable {
    func defaultValue(context: Context) -> Int { 100 }
}

struct TaxedPriceAtom: ValueAtom, Hashable {
    func value(context: Context) throws(AtomError) -> Int {
        try context.watch(PriceAtom()) * 120 / 100
    }
}

/// A price that arrives later, as a server's would.
struct QuoteAtom: TaskAtom, Hashable {
    func value(context: Context) async -> Int {
        await Task.yield()
        return 42
    }
}

let context = AtomTestContext()           // a store of its own: nothing shared
context.override(PriceAtom()) { _ in 10 } // dependency injection, no container
let taxed = try context.watch(TaxedPriceAtom())
precondition(taxed == 12)

try context.set(50, for: PriceAtom())
let updated = try context.read(TaxedPriceAtom())
precondition(updated == 60)

// Wait for a value on a signal, never a clock.
let quote = try await context.waitFor(QuoteAtom().phase) { !$0.isSuspending }
precondition(quote.value == 42)
context.unwatch(TaxedPriceAtom())  // released, with the price it watched
// snippet.end

// snippet.scoped
// One screen of a program sees a price of its own; the rest of the store
// is shared.
let store = AtomStore()
let preview = store.scoped(overriding: [AtomOverride(PriceAtom()) { _ in 1 }])
let screen = try preview.watch(PriceAtom()) { price in print("preview's price:", price) }
try preview.set(2, for: PriceAtom())      // the scope's own price
let scopedPrice = try preview.read(PriceAtom())
let sharedPrice = try store.read(PriceAtom())
precondition(scopedPrice == 2 && sharedPrice == 100)
screen.cancel()
// snippet.end
