// The executors the contract tests run on, as test arguments.
//
// This target does not import Spindle (it is shared by every test target,
// CSpindleTests included), so it names the kinds and each test target turns
// a kind into a `SpinExecutor` (`ExecutorKind.withExecutor` in
// SpindleTests, `StressExecutor` in the stress suite).

/// A kind of executor a loop under test runs on.
package enum ExecutorKind: String, CaseIterable, Sendable, CustomStringConvertible {
    /// `SpinExecutor.sharedPool`: the pool every loop of the test process
    /// shares (never block it).
    case sharedPool
    /// `SpinExecutor.pool(_:)`: a `ReducerPool` made for the test and shut
    /// down at its end.
    case privatePool
    /// `SpinExecutor.dedicatedThread`: a thread of the loop's own.
    case dedicatedThread
    /// `SpinExecutor.queue(_:)`: a serial dispatch queue made for the test.
    case serialQueue
    /// `SpinExecutor.serialExecutor(_:)`: a Swift `SerialExecutor` made for
    /// the test (over a serial dispatch queue of its own).
    case serialExecutor
    /// `SpinExecutor.mainActor`: isolated to the main actor (never block it).
    case mainActor
    /// SpindleNIO's shape: each scheduling handed as a closure to a serial
    /// dispatch queue of the test's (`SpinExecutor.enqueuing`), which knows
    /// its context, so an emit made on that queue outside a slice runs the
    /// loop in place (the inline fast path).
    case enqueuing

    /// How the kind reads in test names and failures.
    package var description: String {
        switch self {
        case .sharedPool: "shared pool"
        case .privatePool: "private pool"
        case .dedicatedThread: "dedicated thread"
        case .serialQueue: "serial queue"
        case .serialExecutor: "serial executor"
        case .mainActor: "main actor"
        case .enqueuing: "enqueuing (inline)"
        }
    }

    /// The kinds a test may block (a reducer or a queue-less feedback that
    /// waits for the test): every kind but the shared pool, whose threads
    /// run the loops of every test in the process, and the main actor.
    package static let blockable: [ExecutorKind] = allCases.filter { $0 != .sharedPool && $0 != .mainActor }
}
