import TureenStore

/// How the copies of a conflict (kept by the store) differ, and what the
/// merge modes make of them.
extension Conflict {
    /// Field-level differences, compared on the fields a server keeps.
    struct Changes {
        var remote: [String]
        var local: [String]
        var conflicting: [String]
    }

    static func changes(base: JSONObject?, theirs: JSONObject?, yours: JSONObject?, ignoring: Set<String>) -> Changes {
        let b = base ?? JSONObject(), t = theirs ?? JSONObject(), y = yours ?? JSONObject()
        var keys: [String] = []
        for o in [b, t, y] { for k in o.keys where !keys.contains(k) && !ignoring.contains(k) && !LocalFlags.isLocalOnly(k) { keys.append(k) } }
        let remote = theirs == nil ? keys.filter { b[$0] != nil } : keys.filter { t[$0] != b[$0] }
        let local = yours == nil ? keys.filter { b[$0] != nil } : keys.filter { y[$0] != b[$0] }
        let conflicting = local.filter { remote.contains($0) && (theirs == nil || yours == nil || t[$0] != y[$0]) }
        return Changes(remote: remote, local: local, conflicting: conflicting)
    }

    /// Theirs with your changes laid over it: what the MERGE_* modes send.
    static func merged(base: JSONObject?, theirs: JSONObject, yours: JSONObject, ignoring: Set<String>) -> JSONObject {
        var out = theirs
        for k in changes(base: base, theirs: theirs, yours: yours, ignoring: ignoring).local {
            out[k] = yours[k]
        }
        return out
    }

    func json(ignoring: Set<String>) -> JSON {
        let c = Conflict.changes(base: base, theirs: theirs, yours: yours, ignoring: ignoring)
        func list(_ a: [String]) -> JSON { .array(a.map { .string($0) }) }
        func obj(_ o: JSONObject?) -> JSON { o.map { .object($0) } ?? .null }
        return .object(JSONObject([
            ("entryId", .int(entryId)), ("id", .string(recordId)), ("syncId", .int(syncId)),
            ("base", obj(base)), ("theirs", obj(theirs)), ("yours", obj(yours)),
            ("remoteChanges", list(c.remote)), ("localChanges", list(c.local)), ("conflictingChanges", list(c.conflicting)),
        ]))
    }
}
