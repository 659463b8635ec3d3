import TureenStore
import TureenCore

// What a target can do beyond reading and writing records. A sync asks the
// target for each (`target.containers?.ensure()`); a kind that lacks one
// answers nil, and the sync goes on as it does for callback targets: no
// containers made, no count before the first page, batches sent one after
// another, records with blobs sent without them, no credentials to keep,
// no cached fetch.

/// Makes the places records go (Kinto's bucket and collection) when missing.
protocol TargetContainers: AnyObject {
    /// Creates what is missing; what exists already is left as it is.
    func ensure() throws
}

/// Counts a listing apart from its pages, so progress has a total from the
/// first report.
protocol FeedCounting: AnyObject {
    /// How many records a sync down from `since` will bring past it, or
    /// nil when the server does not say.
    func count(since: FeedPosition?) throws -> Int?
}

/// Sends sync up's batches over several connections at once.
protocol ParallelUploads: AnyObject {
    /// How many batches may be on the wire at once (1: one after another).
    var uploadConnections: Int { get }
    /// Another connection to the same server, stopped with this target,
    /// whose requests count as this target's. Use it on one thread at a time.
    func extraConnection() throws -> SyncTarget
}

/// Keeps the blobs records refer to on the target's server.
protocol BlobHosting: AnyObject {
    /// The mover for this target's blobs, with its credentials as they are now.
    func blobMover(store: Store, cancel: CancelFlag) throws -> BlobMover
    /// The same, sealing blobs under `keys` (none: as they are), for a
    /// target made without its "encryption" to read the server's records
    /// as they are (reencrypt).
    func blobMover(store: Store, cancel: CancelFlag, sealedUnder keys: EnvelopeKeys?) throws -> BlobMover
}

/// Asks the host for new credentials when the server refuses the old ones.
protocol CredentialRefresh: AnyObject {
    /// Credentials the host gave during this run, to keep for the next.
    var refreshedAuth: JSONObject? { get }
}

/// Reads records outside a sync, for a cached fetch: one record by id, or
/// a listing page by page in the server's own order.
protocol RecordReads: AnyObject {
    func get(id: String) throws -> JSONObject?
    func fetch(since: FeedPosition?, next: JSON?) throws -> FetchPage
    func isTombstone(_ record: JSONObject) -> Bool
    func abandon()
}

/// Decodes the pages it fetches (a target's transformers): sync down
/// fetches with `fetchUndecoded` and decodes with `decode` on its own
/// thread, so the server serves the next page while this one is decoded.
/// Decoded as `fetch` does it, a page held the next request back.
protocol PageDecoding: AnyObject {
    /// A page as the server sent it.
    func fetchUndecoded(since: FeedPosition?, next: JSON?) throws -> FetchPage
    /// That page as `fetch` gives it.
    func decode(_ page: FetchPage) throws -> FetchPage
}

extension SyncTarget {
    var containers: TargetContainers? { nil }
    var pageDecoding: PageDecoding? { nil }
    var counting: FeedCounting? { nil }
    var parallelUploads: ParallelUploads? { nil }
    var blobHosting: BlobHosting? { nil }
    var credentialRefresh: CredentialRefresh? { nil }
    var recordReads: RecordReads? { nil }
    func readServerLimits() throws {}
}
