import Foundation
import Spindle
import Synchronization

/// The soak's producer threads: each emits numbered items to random loops,
/// paced to its share of the rate in 1 ms slots, and waits while the loops
/// owe too much (`SoakBacklog`): a backlog that outgrew the machine would
/// measure overload, not leaks.
final class SoakProducers: Sendable {
    private let world: SoakWorld
    private let producers: Int
    private let perMillisecond: Int
    private let running = Atomic<Bool>(true)
    private let finished = SoakCount()

    init(world: SoakWorld, producers: Int, rate: Int) {
        self.world = world
        self.producers = producers
        perMillisecond = max(1, rate / producers / 1000)
    }

    func start() {
        for producer in 0..<producers {
            let thread = Thread { [self] in
                produce(producer)
                finished.add()
            }
            thread.name = "soak-producer-\(producer)"
            thread.start()
        }
    }

    func stop() { running.store(false, ordering: .releasing) }

    func waitUntilFinished() async {
        while finished.current < producers { try? await Task.sleep(for: .milliseconds(1)) }
    }

    private func produce(_ producer: Int) {
        var random = SystemRandomNumberGenerator()
        let loops = world.slots.count
        var slot = ContinuousClock.now
        while running.load(ordering: .acquiring) {
            for _ in 0..<perMillisecond {
                let target = world.borrow(slot: Int.random(in: 0..<loops, using: &random))
                let sequence = Int32(target.accepted[producer].current + 1)
                switch target.loop.emit(.item(producer: producer, sequence: sequence)) {
                case .accepted:
                    target.accepted[producer].set(Int(sequence))
                    world.acceptedTotal.add()
                    world.backlog.items.add()
                case .stopped:
                    target.rejected.add()
                case .dropped:
                    fatalError("soak: an unbounded queue dropped an event")
                }
                target.inFlight.add(-1)
            }
            slot += .milliseconds(1)
            let now = ContinuousClock.now
            // Behind by more than 100 ms (the machine was busy): start afresh
            // rather than burst to catch up.
            if now - slot > .milliseconds(100) { slot = now }
            if slot > now { usleep(UInt32((slot - now) / .microseconds(1))) }
            waitForTheLoops()
        }
    }

    /// Waits while the loops owe more than `SoakBacklog`'s limits.
    private func waitForTheLoops() {
        let backlog = world.backlog
        guard backlog.isOverLimit else { return }
        let started = ContinuousClock.now
        while backlog.isOverLimit, running.load(ordering: .acquiring) { usleep(200) }
        backlog.waited.add(Int((ContinuousClock.now - started) / .microseconds(1)))
    }
}
