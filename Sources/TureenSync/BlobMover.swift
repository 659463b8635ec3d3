import TureenStore

/// A target's way to move blobs to and from its server.
protocol BlobMover: AnyObject {
    /// Blobs moved so far, and their bytes, for the sync state.
    var moved: Int { get }
    var bytes: Int64 { get }
    /// Uploads the blob unless the server holds it already, so the record
    /// that refers to it never arrives before it.
    func ensureOnServer(_ ref: BlobRef) throws
    /// Downloads the blob into the store; fails (storing nothing) when the
    /// server does not have it or sends other bytes.
    func fetch(_ ref: BlobRef) throws
}

/// Where a target keeps blobs: the two conventions Tureen speaks.
enum BlobPlace {
    case kinto(KintoAttachments.Place)
    case rest(RestBlobs.Place)

    /// The mover for a target of this configuration, or nil when the
    /// target declares no place for blobs.
    static func mover(store: Store, config: RestConfig, cancel: CancelFlag) throws -> BlobMover? {
        switch config.blobs {
        case nil: return nil
        case .kinto(let place)?: return try KintoAttachments(store: store, place: place, config: config, cancel: cancel)
        case .rest(let place)?: return try RestBlobs(store: store, place: place, config: config, cancel: cancel)
        }
    }
}
