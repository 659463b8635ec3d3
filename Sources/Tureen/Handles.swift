import TureenStore

/// Store handles given to C. A handle is a number, not an address: a closed,
/// stale or made-up handle is looked up, not dereferenced, and gets MISUSE.
enum Handles {
    private static let lock = Lock()
    private static var stores: [UInt: Store] = [:]
    private static var next: UInt = 0x7E50

    static func register(_ store: Store) -> OpaquePointer {
        lock.withLock {
            next += 16
            stores[next] = store
            return OpaquePointer(bitPattern: next)!
        }
    }

    static func store(_ h: OpaquePointer?) throws -> Store {
        guard let h = h else { throw TureenError.misuse("store handle is NULL") }
        guard let s = lock.withLock({ stores[UInt(bitPattern: h)] }) else {
            throw TureenError.misuse("store handle is closed or was never opened")
        }
        return s
    }

    static func unregister(_ h: OpaquePointer?) {
        guard let h = h else { return }
        _ = lock.withLock { stores.removeValue(forKey: UInt(bitPattern: h)) }
    }
}
