// A scripted tour of Spindle: a paginated catalogue (the feature spin) driven
// by a session spin through a gear. Run it with `swift run spindle-example`.
//
//   Session.swift    the session spin: log in, go to a page, log out
//   Catalog.swift    the feature spin: pages, the loading feedback, rendering
//   CatalogAPI.swift a fake server with 400 ms of latency
//
// The "user" below is a script, so the program needs no input and ends by
// itself: page 1, page 2, then page 3 before page 2 has arrived (page 2's
// answer is discarded), then logout.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Spindle

@main
struct SpindleExample {
    static func main() async throws {
        _ = Console.start  // the output's clock starts now
        let api = CatalogAPI(latency: .milliseconds(400), pageSize: 3)
        let gear = Gear<SessionNews>()

        // Start the listener first: a gear delivers only to loops attached
        // at that moment.
        let catalog = try makeCatalogSpin(api: api, gear: gear).start()
        let session = try makeSessionSpin(gear: gear).start()

        // Give both loops a moment to render their initial state.
        try? await Task.sleep(for: .milliseconds(50))
        Console.line("user", "logs in as ada")
        session.emit(.logIn(user: "ada"))
        // Every state in order, starting with the current one: wait for page 1.
        for await state in catalog.states() where state.page == 1 && state.loading == nil { break }

        // The state keeps the next page's number: no need to ask the server.
        if let next = catalog.state.next {
            Console.line("user", "clicks next (page \(next))")
            session.emit(.goTo(page: next))
        }
        try? await Task.sleep(for: .milliseconds(150))
        Console.line("user", "jumps to page 3 before page 2 has arrived")
        session.emit(.goTo(page: 3))
        for await state in catalog.states() where state.page == 3 && state.loading == nil { break }

        Console.line("user", "logs out")
        session.emit(.logOut)
        for await state in catalog.states() where state == Catalog() { break }

        // Stop the session first: its gear feedback is the catalogue's source.
        await session.stop()
        let report = await catalog.stop()
        let stats = catalog.statistics

        print("""

        Summary (catalog loop)
          events reduced:          \(report.reduced)
          effect runs started:     \(stats.effectRunsStarted)
          effect runs cancelled:   \(stats.effectRunsCancelled)
          late events discarded:   \(stats.lateEventsDiscarded)
        """)
        guard stats.lateEventsDiscarded >= 1 else {
            print("Unexpected: page 2's late answer was not discarded.")
            exit(1)
        }
        print("""

        Page 2's answer came back after the user had moved on to page 3.
        The run that asked for it had been cancelled by the newer state, so
        its event was discarded and never reduced: page 2 was never shown.
        """)
    }
}
