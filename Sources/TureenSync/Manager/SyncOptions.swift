import TureenStore
import TureenCore

/// How a sync treats records changed on both sides.
enum MergeMode: String {
    case overwrite = "OVERWRITE"
    case leaveIfChanged = "LEAVE_IF_CHANGED"
    case mergeAcceptYours = "MERGE_ACCEPT_YOURS"
    case mergeFailIfConflict = "MERGE_FAIL_IF_CONFLICT"
    case mergeFailIfChanged = "MERGE_FAIL_IF_CHANGED"
}

enum SyncKind: String {
    case down = "syncDown"
    case up = "syncUp"
}

/// The options of one sync, as given and as stored with its state.
struct SyncOptions {
    var name: String?
    var mergeMode = MergeMode.overwrite
    var fieldlist: [String]?
    /// Sync up: how many syncs in a row may send a change the server refuses
    /// before it waits for the app (tureen_sync_error_resolve).
    var maxAttempts = SyncOptions.defaultMaxAttempts
    static let defaultMaxAttempts = 5
    /// False: define the sync (status NEW) without running it. Not kept.
    var start = true
    /// Sync down: fetch the blobs records refer to with their page
    /// (eager), or on first read (lazy).
    var lazyBlobs = false

    static func parse(_ text: String?, kind: SyncKind) throws -> SyncOptions {
        var o = SyncOptions()
        guard let text = text else { return o }
        var r = try ConfigReader(try JSONParser.parse(text), "sync options")
        o.name = try r.string("name")
        if let m = try r.string("mergeMode") {
            // The reference's hybrid docs spell it with spaces too.
            guard let mode = MergeMode(rawValue: m.uppercased().replacingFirst(" ", with: "_").replacingFirst(" ", with: "_")) else {
                throw TureenError.invalid("unknown mergeMode '\(m)'")
            }
            if kind == .down && mode != .overwrite && mode != .leaveIfChanged {
                throw TureenError.invalid("sync down takes mergeMode OVERWRITE or LEAVE_IF_CHANGED, not \(m)")
            }
            o.mergeMode = mode
        }
        o.fieldlist = try r.stringList("fieldlist")
        if let n = try r.int("maxAttempts", 1...1_000_000) {
            guard kind == .up else { throw TureenError.invalid("maxAttempts is a sync up option") }
            o.maxAttempts = n
        }
        o.start = try r.bool("start") ?? true
        if let b = try r.string("blobs") {
            guard b == "eager" || b == "lazy" else { throw TureenError.invalid("\"blobs\" is \"eager\" or \"lazy\", not '\(b)'") }
            guard kind == .down else { throw TureenError.invalid("\"blobs\" is a sync down option") }
            o.lazyBlobs = b == "lazy"
        }
        try r.finish()
        if let n = o.name, Int64(n) != nil {
            throw TureenError.invalid("a sync name cannot be a number ('\(n)'): numbers are sync ids")
        }
        return o
    }

    var json: JSON {
        var o = JSONObject([("mergeMode", .string(mergeMode.rawValue))])
        if let f = fieldlist { o["fieldlist"] = .array(f.map { .string($0) }) }
        if maxAttempts != SyncOptions.defaultMaxAttempts { o["maxAttempts"] = .int(Int64(maxAttempts)) }
        if lazyBlobs { o["blobs"] = .string("lazy") }
        return .object(o)
    }
}
