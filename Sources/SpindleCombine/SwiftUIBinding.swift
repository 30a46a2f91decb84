// SwiftUI conveniences live here, beside `ObservableSpin`, and not in the
// core: `import Spindle` never loads SwiftUI.
#if canImport(SwiftUI)
import SwiftUI
import Spindle

extension Binding {
    /// A SwiftUI binding over a `SpinBinding`: reading calls its
    /// `get`, writing its `set` (which emits the event).
    ///
    /// - Parameter binding: the spin binding, from `UISpin.binding(for:event:)`.
    public init(_ binding: SpinBinding<Value>) {
        self.init(get: binding.get, set: { binding.set($0) })
    }
}
#endif
