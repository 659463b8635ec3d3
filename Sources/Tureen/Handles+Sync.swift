import TureenSync

extension Handles {
    /// The sync manager of the store a handle names (syncs, cached reads,
    /// blobs that a lazy sync awaits).
    static func syncManager(_ h: OpaquePointer?) throws -> SyncManager { SyncManager.of(try store(h)) }
}
