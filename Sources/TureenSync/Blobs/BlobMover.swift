import TureenStore
import TureenCore

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
    /// Whether the server holds the blob (with the reference's length).
    /// Asked for a blob that is not stored here (a lazy sync down left it
    /// on its server): it cannot be uploaded, only found there.
    func holds(_ ref: BlobRef) throws -> Bool
    /// Downloads the blob into the store; fails (storing nothing) when the
    /// server does not have it or sends other bytes. A sealed blob the
    /// server holds wrong is a ServedBlobFault; every other failure is a
    /// TureenError.
    func download(_ ref: BlobRef) throws
    /// For each of the blob's names (see BlobSealing.names: one per listed
    /// key, the first key's first; one name without "encryption"), whether
    /// the server holds it whole under that name.
    func heldNames(_ ref: BlobRef) throws -> [Bool]
    /// Uploads the stored blob under its first name, held there or not.
    func upload(_ ref: BlobRef) throws
    /// Removes from the server the blob under its name at `keyIndex`;
    /// one it does not hold is no error.
    func remove(_ ref: BlobRef, keyIndex: Int) throws
}

extension BlobMover {
    /// `download`, every failure a TureenError: for callers that fail
    /// whatever the cause.
    func fetch(_ ref: BlobRef) throws {
        do {
            try download(ref)
        } catch let f as ServedBlobFault {
            throw f.error
        }
    }
}

/// Where a target keeps blobs: the two conventions Tureen speaks.
enum BlobPlace {
    case kinto(KintoAttachments.Place)
    case rest(RestBlobs.Place)

    /// The mover for `target`'s blobs, kept here, sealed under `keys`
    /// (the target's "encryption", unless its records are read as they are).
    func mover(store: Store, target: RestTarget, cancel: CancelFlag, keys: EnvelopeKeys?) throws -> BlobMover {
        let config = target.config
        // The target's credentials as they are now: a session may have
        // refreshed them since the target was made.
        let senders = try config.blobSenders(target.sender.client.settings, cancel: cancel)
        let sealing = keys.map(BlobSealing.init)
        switch self {
        case .kinto(let place): return KintoAttachments(store: store, place: place, senders: senders, sealing: sealing)
        case .rest(let place): return RestBlobs(store: store, place: place, url: config.url, senders: senders, sealing: sealing)
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

extension RestConfig {
    /// The two senders blob requests use: one with the target's
    /// credentials and headers, for its own server, and one with neither
    /// (the same timeouts, TLS checks and response limit) for files served
    /// elsewhere.
    func blobSenders(_ settings: HTTPSettings, cancel: CancelFlag) throws -> (own: RetryingSender, anonymous: RetryingSender) {
        var bare = HTTPSettings()
        bare.timeoutMs = settings.timeoutMs
        bare.verifyTLS = settings.verifyTLS
        bare.maxResponseBytes = settings.maxResponseBytes
        return (RetryingSender(client: try HTTPClient(settings), maxRetries: maxRetries, networkRetries: networkRetries,
                               maxWaitMs: maxWaitMs, cancel: cancel),
                RetryingSender(client: try HTTPClient(bare), maxRetries: maxRetries, networkRetries: networkRetries,
                               maxWaitMs: maxWaitMs, cancel: cancel))
    }
}
