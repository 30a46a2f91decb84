import Spindle

// MARK: - The feature spin: a paginated catalogue

/// What the catalogue screen shows. As in Spin.Swift's motivating example,
/// the state keeps the previous and next page numbers, so moving on never
/// needs to ask the server where it is.
struct Catalog: Equatable, Sendable {
    /// The page being loaded, nil when idle: the loading flag.
    var loading: Int? = nil
    /// The page on screen, nil before the first load.
    var page: Int? = nil
    var items: [String] = []
    var previous: Int? = nil
    var next: Int? = nil
}

enum CatalogEvent: Sendable {
    case open(page: Int)
    case loaded(Page)
    case reset
}

/// The catalogue's reducer: pure, no side effects.
///
/// `.loaded` needs no check that the page is the one being loaded: the
/// loading feedback runs under `.cancelOnNewState`, so the answer for a page
/// the user has already left is discarded before it reaches the reducer.
@Sendable func catalogReducer(_ catalog: Catalog, _ event: CatalogEvent) -> Catalog {
    var catalog = catalog
    switch event {
    case .open(let page):
        catalog.loading = page
    case .loaded(let page):
        catalog = Catalog(page: page.number, items: page.items, previous: page.previous, next: page.next)
    case .reset:
        catalog = Catalog()
    }
    return catalog
}

/// The loading feedback: an async effect with a dependency (the API), passed
/// before the state. Each new state cancels the previous run
/// (`.cancelOnNewState`, the default), so only the latest request counts.
@Sendable func loadPage(_ api: CatalogAPI, _ catalog: Catalog) async -> CatalogEvent? {
    guard let number = catalog.loading else { return nil }
    return .loaded(await api.fetch(page: number))
}

/// Render feedback: prints every state, returns no event.
@Sendable func renderCatalog(_ catalog: Catalog) -> CatalogEvent? {
    var line: String
    if let page = catalog.page {
        let previous = catalog.previous.map { "◀ \($0)" } ?? "◀ –"
        let next = catalog.next.map { "\($0) ▶" } ?? "– ▶"
        line = "page \(page): \(catalog.items.joined(separator: ", "))   [\(previous) | \(next)]"
    } else {
        line = "(empty)"
    }
    if let loading = catalog.loading { line += "   loading page \(loading)…" }
    Console.line("catalog", line)
    return nil
}

func makeCatalogSpin(api: CatalogAPI, gear: Gear<SessionNews>) -> Spin<Catalog, CatalogEvent> {
    Spin(initialState: Catalog()) {
        // Rendering runs inline on the reducer thread, right after each
        // reduction: printing is cheap, and the lines come out in order.
        Feedback(effect: renderCatalog).executeOnReducerThread()
        Feedback(effect: { await loadPage(api, $0) })
        // gear → loop, closure form: the session moved the user to a page
        Feedback(attachedTo: gear, fromGear: { (news: SessionNews) -> CatalogEvent? in
            if case .userMovedTo(let page) = news { return .open(page: page) }
            return nil
        })
        // gear → loop, short form: on logout, forget everything
        Feedback(attachedTo: gear, catching: .userLoggedOut, emitting: .reset)
        Reducer(catalogReducer)
    }
}
