import Foundation

/// A gate that threads block on until it opens, once. Producers wait here
/// so that thread creation happens before the clock starts and they all
/// begin together when it does.
///
/// `@unchecked Sendable`: `isOpen` is only touched with `condition` locked.
final class StartGate: @unchecked Sendable {
    private let condition = NSCondition()
    private var isOpen = false

    /// Blocks the calling thread until ``open()``. Any thread; never from the
    /// Swift concurrency pool.
    func wait() {
        condition.lock()
        while !isOpen { condition.wait() }
        condition.unlock()
    }

    /// Opens the gate for every waiter, present and future.
    func open() {
        condition.lock()
        isOpen = true
        condition.broadcast()
        condition.unlock()
    }
}
