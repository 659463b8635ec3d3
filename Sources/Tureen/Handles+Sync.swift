import TureenSync
import TureenCore

extension Handles {
    /// The sync manager of the store a handle names (syncs, cached reads,
    /// blobs that a lazy sync awaits); MISUSE once the store began to close.
    static func syncManager(_ h: OpaquePointer?) throws -> SyncManager { try session(h).sync() }

    /// Runs `body` with the manager as a call that may talk to a server:
    /// tureen_store_close stops it and waits for it to return.
    static func serving<T>(_ h: OpaquePointer?, _ body: (SyncManager) throws -> T) throws -> T {
        let m = try syncManager(h)
        return try m.serverCalls.run { try body(m) }
    }
}
