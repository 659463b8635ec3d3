import TureenStore
import TureenCore

/// The eleven notification codes of Red Hat's $fh.sync, with the meanings
/// Tureen gives them, and one of Tureen's own for blobs (tureen.h,
/// tureen_sync_listen, lists them in full).
public enum SyncEventCode: String, CaseIterable {
    case syncStarted = "sync_started"
    case syncComplete = "sync_complete"
    case syncFailed = "sync_failed"
    case offlineUpdate = "offline_update"
    case collisionDetected = "collision_detected"
    case remoteUpdateFailed = "remote_update_failed"
    case remoteUpdateApplied = "remote_update_applied"
    case localUpdateApplied = "local_update_applied"
    case deltaReceived = "delta_received"
    case recordDeltaReceived = "record_delta_received"
    case clientStorageFailed = "client_storage_failed"
    /// Tureen's own: a blob went up or came down.
    case blobTransferred = "blob_transferred"
    /// Tureen's own: part of a large blob went up or came down.
    case blobProgress = "blob_progress"

    /// Parses a listener's filter: `{"codes": [...]}` or `{"<code>": bool, ...}`
    /// ($fh.sync's notify_* flags, with or without the prefix). Nil: every code.
    public static func filter(_ text: String?) throws -> Set<String>? {
        guard let text = text else { return nil }
        guard let o = try JSONParser.parse(text).objectValue else {
            throw TureenError.invalid("a sync event filter must be a JSON object")
        }
        func code(_ name: String) throws -> String {
            let bare = name.hasPrefix("notify_") ? String(name.dropFirst(7)) : name
            guard let c = SyncEventCode(rawValue: bare) else {
                throw TureenError.invalid("unknown sync event code '\(name)'; known: \(allCases.map { $0.rawValue }.joined(separator: ", "))")
            }
            return c.rawValue
        }
        if let list = o["codes"] {
            guard o.count == 1, let items = list.arrayValue else {
                throw TureenError.invalid("\"codes\" must be an array of codes, alone in the filter")
            }
            return Set(try items.map { v in
                guard let s = v.stringValue else { throw TureenError.invalid("\"codes\" holds a value that is not a string") }
                return try code(s)
            })
        }
        // Flags: codes set true are wanted; if only false flags are given,
        // every other code is wanted ($fh.sync's flags default to on).
        var on = Set<String>(), off = Set<String>()
        for m in o.members {
            guard let b = m.value.boolValue else { throw TureenError.invalid("filter member '\(m.key)' must be true or false") }
            if b { on.insert(try code(m.key)) } else { off.insert(try code(m.key)) }
        }
        return on.isEmpty ? Set(allCases.map { $0.rawValue }).subtracting(off) : on
    }
}

/// What a record event says the change was.
enum RecordOperation: String {
    case create, update, delete

    init(_ kind: Change.Kind) {
        switch kind {
        case .create: self = .create
        case .update: self = .update
        case .delete: self = .delete
        }
    }
}

/// Publishes sync events on a store handle. An event's JSON is built only
/// when a listener wants its code, so a sync without listeners pays nothing.
struct SyncEvents {
    let store: Store

    func wants(_ code: SyncEventCode) -> Bool { store.wantsEngineEvent(code.rawValue) }

    func emit(_ code: SyncEventCode, _ fields: @autoclosure () -> [(String, JSON)]) {
        guard wants(code) else { return }
        var o = JSONObject([("code", .string(code.rawValue))])
        for (k, v) in fields() { o[k] = v }
        SyncEventFeedHenry.add(to: &o, code)
        o["time"] = .int(Clock.nowMs())
        store.publishEngineEvent(code: code.rawValue, text: JSON.object(o).text)
    }
}

/// One record's part in a sync, as record events and sync_complete tell it.
struct RecordEvent {
    var recordId: String
    var entryId: Int64
    var operation: RecordOperation
}
