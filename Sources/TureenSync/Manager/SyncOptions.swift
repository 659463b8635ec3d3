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

/// The options of one sync, as given and as stored with its state. Parsed
/// where they come in (`parse`); which kind of sync takes which is the
/// engine's to check (`check(for:)`), once it knows the sync's kind.
public struct SyncOptions: Sendable {
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
    /// The options given that only one kind of sync takes, for `check`.
    private var givenMaxAttempts = false
    private var givenBlobs: String?
    private var givenMergeMode: String?

    /// Options as a sync down, sync up or update gives them (JSON text; nil:
    /// the defaults).
    public static func parse(_ text: String?) throws -> SyncOptions {
        var o = SyncOptions()
        guard let text = text else { return o }
        var r = try ConfigReader(try JSONParser.parse(text), "sync options")
        o.name = try r.string("name")
        if let m = try r.string("mergeMode") {
            // The reference's hybrid docs spell it with spaces too.
            guard let mode = MergeMode(rawValue: m.uppercased().replacingFirst(" ", with: "_").replacingFirst(" ", with: "_")) else {
                throw TureenError.invalid("unknown mergeMode '\(m)'")
            }
            o.mergeMode = mode
            o.givenMergeMode = m
        }
        o.fieldlist = try r.stringList("fieldlist")
        if let n = try r.int("maxAttempts", 1...1_000_000) {
            o.maxAttempts = n
            o.givenMaxAttempts = true
        }
        o.start = try r.bool("start") ?? true
        if let b = try r.string("blobs") {
            guard b == "eager" || b == "lazy" else { throw TureenError.invalid("\"blobs\" is \"eager\" or \"lazy\", not '\(b)'") }
            o.lazyBlobs = b == "lazy"
            o.givenBlobs = b
        }
        try r.finish()
        if let n = o.name, Int64(n) != nil {
            throw TureenError.invalid("a sync name cannot be a number ('\(n)'): numbers are sync ids")
        }
        return o
    }

    /// Refuses the options `kind` of sync does not take.
    func check(for kind: SyncKind) throws {
        if let m = givenMergeMode, kind == .down, mergeMode != .overwrite && mergeMode != .leaveIfChanged {
            throw TureenError.invalid("sync down takes mergeMode OVERWRITE or LEAVE_IF_CHANGED, not \(m)")
        }
        if givenMaxAttempts && kind != .up { throw TureenError.invalid("maxAttempts is a sync up option") }
        if givenBlobs != nil && kind != .down { throw TureenError.invalid("\"blobs\" is a sync down option") }
    }

    /// Options as kept in a sync's state.
    static func parse(_ text: String, kind: SyncKind) throws -> SyncOptions {
        let o = try parse(text)
        try o.check(for: kind)
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
