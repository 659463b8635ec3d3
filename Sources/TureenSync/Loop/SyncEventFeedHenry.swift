import TureenStore
import TureenCore

/// $fh.sync's members of a notification, beside Tureen's own, so an app
/// ported from it reads the fields it knows: "dataset_id" (the sync's name,
/// or its id as text when unnamed; for the events of a local write, which
/// no sync made, the soup's name), "uid" (record events: the record id) and
/// "message" ($fh.sync's text or object for the code).
enum SyncEventFeedHenry {
    static func add(to o: inout JSONObject, _ code: SyncEventCode) {
        o["dataset_id"] = datasetId(o)
        if let id = o["recordId"] { o["uid"] = id }
        o["message"] = message(code, o)
    }

    private static func datasetId(_ o: JSONObject) -> JSON {
        if let name = o["name"], name.stringValue != nil { return name }
        if let id = o["syncId"]?.int64Value { return .string(String(id)) }
        return o["soup"] ?? .null
    }

    private static func message(_ code: SyncEventCode, _ o: JSONObject) -> JSON {
        switch code {
        case .syncStarted: return .null
        case .syncComplete: return .string("online")
        case .syncFailed:
            // $fh.sync: "offline" when the server was out of reach, else what went wrong.
            if o["errorCode"]?.int64Value == Int64(TureenCode.network.rawValue) { return .string("offline") }
            return o["error"] ?? .null
        case .offlineUpdate, .localUpdateApplied, .recordDeltaReceived: return o["operation"] ?? .null
        case .deltaReceived: return .string("partial dataset")
        case .remoteUpdateApplied: return update(o, "applied")
        case .remoteUpdateFailed: return update(o, "failed")
        case .collisionDetected: return update(o, "collision")
        case .clientStorageFailed: return o["error"] ?? .null
        case .blobTransferred, .blobProgress: return o["direction"] ?? .null
        }
    }

    /// $fh.sync's update object, with the members a Tureen sync knows.
    private static func update(_ o: JSONObject, _ type: String) -> JSON {
        var u = JSONObject([("action", o["operation"] ?? .null), ("type", .string(type)), ("uid", o["recordId"] ?? .null)])
        if type == "failed" { u["msg"] = o["error"] ?? .null }
        return .object(u)
    }
}
