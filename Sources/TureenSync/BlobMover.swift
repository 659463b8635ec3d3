import TureenStore

/// A target's way to move blobs to and from its server.
protocol BlobMover: AnyObject {
    /// Blobs moved so far, and their bytes, for the sync state.
    var moved: Int { get }
    var bytes: Int64 { get }
    /// Told every `BlobProgress.step` bytes of a blob in flight: the blob,
    /// "up" or "down", and its bytes moved so far.
    var progress: ((BlobRef, String, Int64) -> Void)? { get set }
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

/// One blob's bytes in flight, reported every `step` of them, so that a
/// large transfer shows progress before it ends.
struct BlobProgress {
    static let step: Int64 = 4 << 20
    private let report: ((Int64) -> Void)?
    private var next = BlobProgress.step

    init(_ report: ((Int64) -> Void)?) { self.report = report }

    /// `total` bytes of the blob have moved (fewer than before when a retry
    /// started it again).
    mutating func moved(_ total: Int64) {
        guard let report else { return }
        if total < next - BlobProgress.step || total >= next {
            next = (total / BlobProgress.step + 1) * BlobProgress.step
            if total > 0 { report(total) }
        }
    }
}
