import TureenStore
import TureenCore

/// Blobs that a lazy sync down left on the server are fetched here, on
/// first read or when the app asks.
extension SyncManager {
    /// A reader of the blob, fetched first when a lazy sync awaits it.
    public func blobReader(_ digest: String) throws -> BlobReader {
        do {
            return try store.blobReader(digest)
        } catch let e as TureenError where e.code == .notFound {
            guard try fetchBlob(digest) else { throw e }
            return try store.blobReader(digest)
        }
    }

    /// Writes the blob to `path`, whole and verified or not at all,
    /// fetched first when a lazy sync awaits it.
    public func exportBlob(_ digest: String, path: String) throws {
        try blobReader(digest).export(to: path)
    }

    /// Fetches an awaited blob now; false when no sync awaits it (it is
    /// stored already, or unknown).
    @discardableResult
    public func fetchBlob(_ digest: String) throws -> Bool {
        guard let (syncId, ref) = try store.blobWanted(digest) else { return false }
        if try store.blob(digest) != nil { return false }
        let state = try load(String(syncId))
        let target = try makeTarget(state.target, cancel: CancelFlag())
        guard let mover = try target.blobHosting?.blobMover(store: store, cancel: CancelFlag(parent: serverCalls.closing)) else {
            throw TureenError.invalid("sync \(syncId) awaits blob \(digest), but its target cannot fetch blobs (a Kinto target, or a REST target with \"blobs\", can)")
        }
        try mover.fetch(ref)
        return true
    }
}
