import Dispatch

/// One page of the catalogue, as the fake server returns it: the items and
/// the numbers of the pages around it (nil at either end).
struct Page: Equatable, Sendable {
    let number: Int
    let items: [String]
    let previous: Int?
    let next: Int?
}

/// A fake paginated server: deterministic data, a fixed latency.
///
/// It stands for an old callback-based client that **cannot be cancelled**:
/// once a request is sent, its answer comes back whatever the caller does.
/// That is on purpose. Under `.cancelOnNewState`, Spindle discards the event a
/// cancelled run emits even when the effect ignores cancellation, so a late
/// answer for a page the user has left is never reduced.
struct CatalogAPI: Sendable {
    /// How long every request takes.
    let latency: Duration
    /// Items per page.
    let pageSize: Int

    static let fruits = [
        "Apple", "Apricot", "Banana", "Blackberry", "Cherry", "Damson",
        "Fig", "Grape", "Kiwi", "Lemon", "Mango",
    ]

    var pageCount: Int { (Self.fruits.count + pageSize - 1) / pageSize }

    /// Fetches page `number` (1-based) after `latency`, on a global queue.
    func fetch(page number: Int) async -> Page {
        Console.line("api", "GET /fruits?page=\(number)")
        let page = makePage(number)
        let delay = DispatchTimeInterval.milliseconds(Int(latency / .milliseconds(1)))
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().asyncAfter(deadline: .now() + delay) { done.resume() }
        }
        Console.line("api", "page \(number) answered")
        return page
    }

    private func makePage(_ number: Int) -> Page {
        let first = min((number - 1) * pageSize, Self.fruits.count)
        let last = min(first + pageSize, Self.fruits.count)
        return Page(
            number: number,
            items: Array(Self.fruits[first..<last]),
            previous: number > 1 ? number - 1 : nil,
            next: number < pageCount ? number + 1 : nil
        )
    }
}
