import TureenStore
import TureenCore

/// One page of a sync down feed.
struct FetchPage {
    /// Changed only with their texts (`removeRecords`), so the two stay one for one.
    private(set) var records: [JSONObject]
    /// Where the next page starts; nil on the last page.
    var next: JSON?
    /// The total the server announced, when it does.
    var total: Int?
    /// The collection's timestamp when the server answered, when it says.
    var snapshot: Int64?
    /// The records' text as the server sent it, when the target kept it.
    private(set) var texts: RecordTexts?
    /// Records that could not be read (a transformer failed), by index: each
    /// stands in `records` as its id and stamp alone, so its stamp counts
    /// and it fails alone.
    var failures: [Int: TureenError] = [:]

    /// `texts`, if given, must hold one span (or nil) per record.
    init(records: [JSONObject], next: JSON? = nil, total: Int? = nil, texts: RecordTexts? = nil) {
        self.records = records
        self.next = next
        self.total = total
        self.texts = texts?.spans.count == records.count ? texts : nil
    }

    /// Drops the records `drop` picks, and their texts.
    mutating func removeRecords(where drop: (JSONObject) -> Bool) {
        var kept: [JSONObject] = []
        var keptSpans: [Range<Int>?] = []
        for (i, r) in records.enumerated() where !drop(r) {
            kept.append(r)
            if let t = texts { keptSpans.append(t.spans[i]) }
        }
        records = kept
        texts?.spans = keptSpans
    }
}

/// A local change on its way to the server.
struct Change {
    enum Kind { case create, update, delete }
    var kind: Kind
    var id: String
    /// The fields to send (create and update).
    var record: JSONObject
    /// Send only `record`'s fields as a partial update (a fieldlist).
    var partial: Bool
    /// The server's version this change was made against (If-Match), or
    /// nil to overwrite without a precondition.
    var ifMatch: String?
    /// The server copy it was made against (callback hosts compare with it).
    var base: JSONObject?
}

/// What the server made of one change.
enum PushOutcome {
    /// Applied; the server's copy when it returned one.
    case applied(JSONObject?)
    /// The precondition failed: the server holds another version (its copy
    /// when known), or none (`nil`: it is gone).
    case conflict(JSONObject?, known: Bool)
    /// The record does not exist on the server.
    case notFound
    /// Rejected; this record fails, the others go on.
    case rejected(TureenError)
}

/// What a server holds under one record id.
enum ServerRecord {
    case live(JSONObject)
    /// Its tombstone: the record was there and was deleted.
    case deleted
    /// Nothing the target can show: never there, or deleted on a server
    /// that keeps no tombstones (or shows none for one record).
    case none
}

/// Where records come from and go to: a declared REST API (Kinto is a preset)
/// or host callbacks.
protocol SyncTarget: AnyObject {
    var idField: String { get }
    var modifiedField: String { get }
    /// True when the feed is sorted by the modification field, ascending, so
    /// the highest stamp seen can be saved after every page.
    var sortedByModification: Bool { get }
    /// Changes per request on sync up (1 without a batch endpoint).
    var batchSize: Int { get }
    /// Requests sent so far, for the sync state and the benchmarks.
    var requestCount: Int { get }
    /// Requests that may have reached the server (requestCount less those
    /// known never to have connected): unchanged over a sync up means no
    /// change of it can have been written there. Nil when the target
    /// cannot tell (any change sent may have been written).
    var mayHaveArrivedCount: Int? { get }
    /// True when `fetch` may run on another thread than the sync's, while
    /// the sync commits the previous page (false for host callbacks).
    var fetchesOnAnyThread: Bool { get }
    /// Ends a request running on another thread as soon as it can (its
    /// result is not wanted); the target is not used again afterwards.
    func abandon()

    func fetch(since: FeedPosition?, next: JSON?) throws -> FetchPage
    func push(_ changes: [Change]) throws -> [PushOutcome]
    /// The server's copy of one record, or nil when it has none.
    func get(id: String) throws -> JSONObject?
    /// The server's copy of one record, or its tombstone where the target
    /// can show one.
    func lookUp(id: String) throws -> ServerRecord
    /// The version token a change made against `base` sends as If-Match.
    func version(of base: JSONObject) -> String?
    /// Whether a record from the feed is a deletion.
    func isTombstone(_ record: JSONObject) -> Bool
    /// True when the target receives each change's base and compares it
    /// with what it holds, so no precondition or read is needed for it.
    var comparesBase: Bool { get }
    /// How far (ms) below its position a sync down reads again, for records
    /// committed late (see RestConfig.sinceOverlapMs); 0 for none.
    var sinceOverlapMs: Int64 { get }

    // What the target can do beyond records (TargetCapabilities); nil for
    // what it cannot.
    var containers: TargetContainers? { get }
    var counting: FeedCounting? { get }
    var parallelUploads: ParallelUploads? { get }
    var blobHosting: BlobHosting? { get }
    var credentialRefresh: CredentialRefresh? { get }
    var recordReads: RecordReads? { get }
    var pageDecoding: PageDecoding? { get }
    /// Learns the server's limits (the batch size it takes) before sync up.
    func readServerLimits() throws
    /// Waits before changes whose request failed marked `mayHaveApplied`
    /// are sent again (under preconditions, ChangePusher); false, at once,
    /// when `attempt` (0 first) is past the retries the target allows.
    func pauseBeforeResend(attempt: Int) throws -> Bool
}

extension SyncTarget {
    func pauseBeforeResend(attempt: Int) throws -> Bool { false }
    var sinceOverlapMs: Int64 { 0 }
    var mayHaveArrivedCount: Int? { nil }
    var comparesBase: Bool { false }

    func lookUp(id: String) throws -> ServerRecord {
        try get(id: id).map { .live($0) } ?? .none
    }
}
