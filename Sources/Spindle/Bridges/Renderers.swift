import Dispatch

/// The render targets of a ``UISpin`` and the last state rendered.
///
/// Thread safety: `add` and `render` from any thread (`render` is called on
/// `queue` by the render feedback); the targets are rendered on `queue` only.
final class Renderers<State: Sendable>: Sendable {
    private struct Storage {
        var targets: [AnyRenderTarget<State>] = []
        var lastRendered: State?
    }

    let queue: DispatchQueue
    // protected by lock
    private let storage = Lock(Storage())

    init(queue: DispatchQueue) {
        self.queue = queue
    }

    /// Adds a target; on `queue`, it first renders the last rendered state.
    func add(_ target: AnyRenderTarget<State>) {
        queue.async { [self] in
            let last = storage.withLock { storage -> State? in
                storage.targets.append(target)
                return storage.lastRendered
            }
            if let last { _ = target.render(last) }
        }
    }

    /// Renders `state` on every live target, dropping released ones. On
    /// `queue` only (so renders never overlap and keep their order).
    func render(_ state: State) {
        let targets = storage.withLock { storage -> [AnyRenderTarget<State>] in
            storage.lastRendered = state
            return storage.targets
        }
        var released = false
        for target in targets where !target.render(state) { released = true }
        if released {
            storage.withLock { $0.targets.removeAll { !$0.isAlive() } }
        }
    }
}

/// One container, held weakly, and its render function.
///
/// `@unchecked Sendable`: the container and the function are not `Sendable`;
/// the box is made on the caller's thread and then only used on the render
/// queue (a serial queue; `Renderers` calls `render` and `isAlive` there
/// alone), which is the queue the caller chose for that container.
final class RenderTarget<State, Container: AnyObject>: @unchecked Sendable {
    private weak var container: Container?
    private let function: (Container) -> (State) -> Void

    init(container: Container, function: @escaping (Container) -> (State) -> Void) {
        self.container = container
        self.function = function
    }
}

/// A render target with its container type erased.
struct AnyRenderTarget<State: Sendable>: Sendable {
    /// Renders on the container; false once it is gone. Render queue only.
    let render: @Sendable (State) -> Bool
    /// Whether the container is still there. Render queue only.
    let isAlive: @Sendable () -> Bool
}

extension RenderTarget where State: Sendable {
    var erased: AnyRenderTarget<State> {
        AnyRenderTarget(
            render: { state in
                guard let container = self.container else { return false }
                self.function(container)(state)
                return true
            },
            isAlive: { self.container != nil })
    }
}
