import TureenStore
import TureenSync
import TureenCore

/// Handles given to C: stores, listener tokens, and later loops and blob
/// streams. A handle is a number, not an address: a closed, stale or
/// made-up handle is looked up, not dereferenced, and gets MISUSE. One
/// counter numbers every kind, so a handle of one kind passed as another is
/// not found either.
final class HandleTable<Object: AnyObject>: @unchecked Sendable {
    // Unchecked: `objects` is touched only under Handles.lock.
    private let what: String
    private var objects: [UInt: Object] = [:]

    init(_ what: String) { self.what = what }

    func register(_ object: Object) -> OpaquePointer {
        Handles.lock.withLock {
            Handles.next += 16
            objects[Handles.next] = object
            // Never zero: the counter starts well above it and only grows.
            return OpaquePointer(bitPattern: Handles.next)!
        }
    }

    func get(_ h: OpaquePointer?) throws -> Object {
        guard let h = h else { throw TureenError.misuse("\(what) handle is NULL") }
        guard let o = Handles.lock.withLock({ objects[UInt(bitPattern: h)] }) else {
            throw TureenError.misuse("\(what) handle is closed, removed or was never made")
        }
        return o
    }

    /// Forgets a handle; the object it named, or nil when it was not known.
    @discardableResult
    func unregister(_ h: OpaquePointer?) -> Object? {
        guard let h = h else { return nil }
        return Handles.lock.withLock { objects.removeValue(forKey: UInt(bitPattern: h)) }
    }

    /// Forgets every handle whose object matches.
    func unregisterAll(where match: (Object) -> Bool) -> [Object] {
        Handles.lock.withLock {
            let gone = objects.filter { match($0.value) }
            for k in gone.keys { objects.removeValue(forKey: k) }
            return Array(gone.values)
        }
    }
}

/// A listener as the host holds it: the store it listens to and its id there.
final class ListenerToken {
    let store: Store
    let id: Int
    init(store: Store, id: Int) {
        self.store = store
        self.id = id
    }
}

enum Handles {
    fileprivate static let lock = Lock()
    // Unsafe to the compiler; safe because it is touched only under `lock`.
    nonisolated(unsafe) fileprivate static var next: UInt = 0x7E50

    static let sessions = HandleTable<Session>("store")
    static let listeners = HandleTable<ListenerToken>("listener")
    static let blobWriters = HandleTable<BlobWriter>("blob writer")
    static let blobReaders = HandleTable<BlobReader>("blob reader")

    static func register(_ session: Session) -> OpaquePointer { sessions.register(session) }
    static func session(_ h: OpaquePointer?) throws -> Session { try sessions.get(h) }
    static func store(_ h: OpaquePointer?) throws -> Store { try sessions.get(h).store }
}
