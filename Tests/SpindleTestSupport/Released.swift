import Foundation

// Per-object teardown facts. Spindle's live-object counters are
// process-wide, and the suites of one test process run in parallel, so a
// unit test that compares them with a baseline can be moved by another
// test's loops (a leak hidden by someone else's loop ending, or a failure
// while someone else's loop runs). These facts belong to one test alone.

/// Calls `onDeinit` when it is deinitialized: captured by a loop's reducer,
/// feedback or effect handler, it tells when the loop lets go of that
/// closure.
package final class Probe: Sendable {
    private let onDeinit: @Sendable () -> Void
    package init(onDeinit: @escaping @Sendable () -> Void) { self.onDeinit = onDeinit }
    deinit { onDeinit() }
}

/// Probes handed out to the parts of the loops under test, and whether
/// every one of them has been let go.
package final class ReleaseProbes: Sendable {
    private let outstanding = Counter()

    package init() {}

    /// A probe to capture in a closure the loop holds.
    package func probe() -> Probe {
        outstanding.add()
        return Probe { [outstanding] in outstanding.add(-1) }
    }

    /// Probes made and not yet deinitialized.
    package var live: Int { outstanding.current }
}
