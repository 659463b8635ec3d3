import TureenStore
import TureenCore

/// A sync's persisted state: an entry of the soup `syncs_soup`, in the shape
/// SmartSync uses, plus counts and ids of what failed or is in conflict.
struct SyncState {
    enum Status: String { case new = "NEW", running = "RUNNING", done = "DONE", failed = "FAILED", stopped = "STOPPED" }

    static let soup = "syncs_soup"
    static let specs = [IndexSpec(path: "name", type: .string), IndexSpec(path: "type", type: .string),
                        IndexSpec(path: "soupName", type: .string)]

    var id: Int64 = 0
    var kind: SyncKind
    var name: String?
    var target: JSON
    var soupName: String
    var options: SyncOptions
    var status = Status.new
    var done = 0
    var totalSize = -1
    var maxTimeStamp: Int64 = -1
    /// The server's text of the stamp maxTimeStamp came from, when it was a
    /// date-time: the next run's since parameter, as the server wrote it.
    var maxTimeStampText: String?
    var startTime: Int64 = 0
    var endTime: Int64 = 0
    var error: String?
    var synced = 0
    var failedIds: [Int64] = []
    var conflictIds: [Int64] = []
    /// Records sync down refused (no id, or a modification stamp that is not
    /// a sane integer): their ids, null where a record had none.
    var failedRecords: [JSON] = []
    var requests = 0
    /// Blobs this sync moved (uploaded or downloaded) in its last run, and their bytes.
    var blobs = 0
    var blobBytes: Int64 = 0
    /// When a server asked for a pause longer than the target allows: the
    /// epoch ms it named, so a scheduler can come back then.
    var retryAt: Int64?
    /// Sync down: the server's collection went back below maxTimeStamp.
    var serverFlushed = false
    /// Sync down with a since overlap: while set, runs read the window below
    /// maxTimeStamp again. It is this device's time when a record committed
    /// late below the position would have shown (the position moved, plus
    /// the overlap); a run that starts after it and ends reads the window
    /// for the last time and clears it, so idle runs stop fetching it.
    var overlapUntil: Int64?

    /// Why records failed, one object per failed entry or record (the
    /// first `SyncState.errorsKept`): entryId, id, operation, status (the
    /// error's status name), httpStatus, error.
    var recordErrors: [JSON] = []
    static let errorsKept = 100

    mutating func fail(_ entryId: Int64, recordId: String?, operation: RecordOperation, _ e: TureenError) {
        failedIds.append(entryId)
        noteError(entryId, recordId: recordId, operation: operation, e)
    }

    /// A record sync down could not read (a transformer failed on it); the
    /// entry it would have changed, if there is one.
    mutating func failDown(_ recordId: String, entryId: Int64?, _ e: TureenError) {
        failedRecords.append(.string(recordId))
        noteError(entryId, recordId: recordId, operation: entryId == nil ? .create : .update, e)
    }

    private mutating func noteError(_ entryId: Int64?, recordId: String?, operation: RecordOperation, _ e: TureenError) {
        guard recordErrors.count < SyncState.errorsKept else { return }
        recordErrors.append(.object(JSONObject([
            ("entryId", entryId.map { .int($0) } ?? .null), ("id", recordId.map { .string($0) } ?? .null),
            ("operation", .string(operation.rawValue)), ("status", .string("\(e.code.name)")),
            ("httpStatus", e.httpStatus.map { .int(Int64($0)) } ?? .null), ("error", .string(e.message)),
        ])))
    }

    /// A run begins: RUNNING, with the last run's outcome cleared; a run
    /// that is not `resuming` counts its progress from 0.
    mutating func begin(resuming: Bool) {
        status = .running
        startTime = Clock.nowMs()
        endTime = 0
        error = nil
        failedIds = []
        recordErrors = []
        failedRecords = []
        conflictIds = []
        retryAt = nil
        serverFlushed = false
        synced = 0
        if !resuming {
            done = 0
            totalSize = -1
        }
    }

    /// Forgets where the sync was: its next run starts from scratch (NEW).
    mutating func startOver() {
        highest = Stamp(ms: -1, text: nil)
        totalSize = -1
        done = 0
        status = .new
        serverFlushed = false
        overlapUntil = nil
    }

    /// The highest stamp seen, as sync down compares and sends it.
    var highest: Stamp {
        get { Stamp(ms: maxTimeStamp, text: maxTimeStampText) }
        set { (maxTimeStamp, maxTimeStampText) = (newValue.ms, newValue.text) }
    }

    /// Records that failed, of either kind.
    var failedCount: Int { failedIds.count + failedRecords.count }

    var progress: Int {
        if status == .done { return 100 }
        // Both are read back from syncs_soup, which an app can write: no trap.
        guard totalSize > 0, done > 0 else { return 0 }
        return done >= totalSize ? 100 : Int(Double(done) * 100 / Double(totalSize))
    }

    var object: JSONObject {
        var o = JSONObject()
        if id > 0 { o[EntryText.idKey] = .int(id) }
        o["type"] = .string(kind.rawValue)
        o["name"] = name.map { .string($0) } ?? .null
        o["target"] = TargetSecrets.redact(target)
        o["soupName"] = .string(soupName)
        o["options"] = options.json
        o["status"] = .string(status.rawValue)
        o["progress"] = .int(Int64(progress))
        o["done"] = .int(Int64(done))
        o["totalSize"] = .int(Int64(totalSize))
        o["maxTimeStamp"] = .int(maxTimeStamp)
        o["maxTimeStampText"] = maxTimeStampText.map { .string($0) } ?? .null
        o["startTime"] = .int(startTime)
        o["endTime"] = .int(endTime)
        o["error"] = error.map { .string($0) } ?? .null
        o["synced"] = .int(Int64(synced))
        o["failed"] = .int(Int64(failedCount))
        o["conflicts"] = .int(Int64(conflictIds.count))
        o["failedIds"] = .array(failedIds.map { .int($0) })
        o["conflictIds"] = .array(conflictIds.map { .int($0) })
        o["failedRecordIds"] = .array(failedRecords)
        o["recordErrors"] = .array(recordErrors)
        o["retryAt"] = retryAt.map { .int($0) } ?? .null
        o["serverFlushed"] = .bool(serverFlushed)
        o["overlapUntil"] = overlapUntil.map { .int($0) } ?? .null
        o["requests"] = .int(Int64(requests))
        o["blobs"] = .int(Int64(blobs))
        o["blobBytes"] = .int(blobBytes)
        return o
    }

    var text: String { JSON.object(object).text }

    init(kind: SyncKind, name: String?, target: JSON, soupName: String, options: SyncOptions) {
        self.kind = kind
        self.name = name
        self.target = target
        self.soupName = soupName
        self.options = options
    }

    init(_ o: JSONObject) throws {
        func bad() -> TureenError { TureenError(.corrupt, "a sync state in \(SyncState.soup) is malformed") }
        guard let k = o["type"]?.stringValue.flatMap(SyncKind.init(rawValue:)), let soup = o["soupName"]?.stringValue else { throw bad() }
        var options = SyncOptions()
        if let opts = o["options"], opts != .null {
            options = try SyncOptions.parse(opts.text, kind: k)
        }
        options.name = o["name"]?.stringValue
        self.init(kind: k, name: options.name, target: o["target"] ?? .null, soupName: soup, options: options)
        id = o[EntryText.idKey]?.int64Value ?? 0
        status = o["status"]?.stringValue.flatMap(Status.init(rawValue:)) ?? .new
        done = Int(o["done"]?.int64Value ?? 0)
        totalSize = Int(o["totalSize"]?.int64Value ?? -1)
        maxTimeStamp = o["maxTimeStamp"]?.int64Value ?? -1
        maxTimeStampText = o["maxTimeStampText"]?.stringValue
        startTime = o["startTime"]?.int64Value ?? 0
        endTime = o["endTime"]?.int64Value ?? 0
        error = o["error"]?.stringValue
        synced = Int(o["synced"]?.int64Value ?? 0)
        failedIds = o["failedIds"]?.arrayValue?.compactMap { $0.int64Value } ?? []
        conflictIds = o["conflictIds"]?.arrayValue?.compactMap { $0.int64Value } ?? []
        failedRecords = o["failedRecordIds"]?.arrayValue ?? []
        recordErrors = o["recordErrors"]?.arrayValue ?? []
        retryAt = o["retryAt"]?.int64Value
        serverFlushed = o["serverFlushed"]?.boolValue ?? false
        overlapUntil = o["overlapUntil"]?.int64Value
        requests = Int(o["requests"]?.int64Value ?? 0)
        blobs = Int(o["blobs"]?.int64Value ?? 0)
        blobBytes = o["blobBytes"]?.int64Value ?? 0
    }
}
