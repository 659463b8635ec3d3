import TureenStore

/// SmartSync's record flags, kept inside each entry so that an app can set
/// them itself, plus the conversions between entries and server records.
enum LocalFlags {
    static let local = "__local__"
    static let created = "__locally_created__"
    static let updated = "__locally_updated__"
    static let deleted = "__locally_deleted__"
    static let lastError = "__last_error__"
    static let all = [local, created, updated, deleted]

    static func isSet(_ o: JSONObject, _ flag: String) -> Bool { o[flag] == .bool(true) }
    static func isLocal(_ o: JSONObject) -> Bool { isSet(o, local) }

    /// Marks an entry as in step with the server.
    static func markClean(_ o: inout JSONObject) {
        for f in all { o[f] = .bool(false) }
        o[lastError] = nil
    }

    /// The fields a server receives: no soup bookkeeping, no flags, and not
    /// the server-managed modification stamp.
    static func serverFields(_ entry: JSONObject, idField: String, modifiedField: String, fieldlist: [String]?) -> JSONObject {
        var out = JSONObject()
        if let f = fieldlist {
            if let id = entry[idField] { out[idField] = id }
            for k in f where k != modifiedField { if let v = entry[k] { out[k] = v } }
            return out
        }
        for m in entry.members where !isLocalOnly(m.key) && m.key != modifiedField {
            out.appendUnchecked(m.key, m.value)
        }
        return out
    }

    /// An entry without the fields that only exist locally: the server
    /// record it holds.
    static func withoutLocalFields(_ entry: JSONObject) -> JSONObject {
        var out = JSONObject()
        for m in entry.members where !isLocalOnly(m.key) { out.appendUnchecked(m.key, m.value) }
        return out
    }

    static func isLocalOnly(_ key: String) -> Bool {
        key == EntryText.idKey || key == EntryText.modifiedKey || key == lastError || all.contains(key)
    }

    /// A server record as an entry: clean, keeping the local entry id.
    static func entry(from record: JSONObject, entryId: Int64?) -> JSONObject {
        var o = record
        markClean(&o)
        if let id = entryId { o[EntryText.idKey] = .int(id) }
        return o
    }
}
