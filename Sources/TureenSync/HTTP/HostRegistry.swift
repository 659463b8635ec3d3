import TureenStore
import TureenCore

/// What a host registered on one store handle under a name: callback
/// targets, credential refreshers. The value's deinit releases the host's
/// context, so a value replaced or removed while a sync still holds it is
/// released when that sync lets go.
final class HostRegistry<Value: AnyObject>: @unchecked Sendable {
    // Unchecked: `values` is touched only under `lock`.
    private let lock = Lock()
    private var values: [String: Value] = [:]

    func get(_ name: String) -> Value? { lock.withLock { values[name] } }

    /// Registers `v` under `name` (a soup-style name), replacing any.
    /// The value is made only once the name is known good: a value made and
    /// then refused would release the host's context, which the header says
    /// a failed registration has not taken.
    func register(_ name: String, kind: String, _ make: () -> Value) throws {
        try SoupCatalog.validateName(name, kind: kind)
        let v = make()
        // The old one is released outside the lock.
        let old = lock.withLock { values.updateValue(v, forKey: name) }
        _ = old
    }

    /// Removes `name`; `what` names the kind in the error.
    func unregister(_ name: String, what: String) throws {
        let old = lock.withLock { values.removeValue(forKey: name) }
        guard old != nil else { throw TureenError(.notFound, "no \(what) '\(name)'") }
    }

    func removeAll() {
        let all = lock.withLock { () -> [String: Value] in let a = values; values = [:]; return a }
        _ = all
    }
}
