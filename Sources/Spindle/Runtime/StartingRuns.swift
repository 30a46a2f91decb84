/// The live effect runs of one feedback or effect router, each started with
/// `Task.immediate` so that its effect is called synchronously, in order, by
/// the one runner that starts it.
///
/// A run is entered (`enter`) before its effect is called, outside the
/// owner's lock, and its task registered (`register`) after the call; in
/// between, the run may finish (`finish`) or be cancelled (`cancelAll`, which
/// takes every run out). So a registration that finds its run gone cancels
/// the task it brings, and no cancelled run's task outlives the stop.
///
/// Thread safety: a value, kept under its owner's lock.
struct StartingRuns {
    private enum Slot {
        /// Its effect is being called by the runner; no task yet.
        case starting
        /// Started; cancelled through its task.
        case running(Task<Void, Never>)
        /// It finished before its task was registered.
        case finishedWhileStarting
    }

    private var slots: [UInt64: Slot] = [:]

    var isEmpty: Bool { slots.isEmpty }

    /// Enters run `id`, about to be called.
    mutating func enter(_ id: UInt64) {
        slots[id] = .starting
    }

    /// Registers the task of run `id` once its call returned. True when the
    /// caller must cancel the task now: the run was cancelled meanwhile.
    mutating func register(_ task: Task<Void, Never>, for id: UInt64) -> Bool {
        switch slots[id] {
        case .starting:
            slots[id] = .running(task)
            return false
        case .finishedWhileStarting:
            slots[id] = nil
            return false
        case .running, nil:
            return true
        }
    }

    /// Run `id`'s task returned.
    mutating func finish(_ id: UInt64) {
        switch slots[id] {
        case .starting: slots[id] = .finishedWhileStarting
        case .running: slots[id] = nil
        case .finishedWhileStarting, nil: break
        }
    }

    /// Takes every live run out: the tasks to cancel (once the lock is
    /// released) and the cancelled runs' ids, in id order. A run that
    /// finished while starting is dropped, neither cancelled nor counted; a
    /// starting run is counted, and its registration cancels its task.
    mutating func cancelAll() -> (tasks: [Task<Void, Never>], ids: [UInt64]) {
        guard !slots.isEmpty else { return ([], []) }
        var tasks: [Task<Void, Never>] = []
        var ids: [UInt64] = []
        for id in slots.keys.sorted() {
            switch slots[id]! {
            case .running(let task): tasks.append(task)
            case .starting: break
            case .finishedWhileStarting: continue
            }
            ids.append(id)
        }
        slots.removeAll(keepingCapacity: true)
        return (tasks, ids)
    }
}
