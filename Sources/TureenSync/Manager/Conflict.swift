import TureenStore
import TureenCore

/// A record changed on both sides, as the sync engine keeps it: the base copy
/// from the last sync, the server's copy ("theirs", nil when deleted there)
/// and the local one ("yours", nil when deleted here). Kept in
/// tureen_conflicts (SyncTables) until one side wins.
struct Conflict {
    var entryId: Int64
    var recordId: String
    var syncId: Int64
    var base: JSONObject?
    var theirs: JSONObject?
    var yours: JSONObject?
}

/// How the copies of a conflict differ, and what the merge modes make of
/// them.
extension Conflict {
    /// Field-level differences, compared on the fields a server keeps.
    struct Changes {
        var remote: [String]
        var local: [String]
        var conflicting: [String]
    }

    static func changes(base: JSONObject?, theirs: JSONObject?, yours: JSONObject?, ignoring: String) -> Changes {
        let b = base ?? JSONObject(), t = theirs ?? JSONObject(), y = yours ?? JSONObject()
        // Names are found through indexes and sets: theirs comes from the
        // server, and a scan per name made a huge copy take minutes.
        let bi = b.indexForLookups(), ti = t.indexForLookups(), yi = y.indexForLookups()
        var keys: [String] = []
        var seen = Set<ExactString>()
        for o in [b, t, y] {
            for k in o.keys where !k.hasSameBytes(as: ignoring) && !LocalFlags.isLocalOnly(k) && seen.insert(ExactString(k)).inserted {
                keys.append(k)
            }
        }
        let remote = theirs == nil ? keys.filter { b.value($0, index: bi) != nil } : keys.filter { t.value($0, index: ti) != b.value($0, index: bi) }
        let local = yours == nil ? keys.filter { b.value($0, index: bi) != nil } : keys.filter { y.value($0, index: yi) != b.value($0, index: bi) }
        let changedRemotely = Set(remote.map(ExactString.init))
        let conflicting = local.filter {
            changedRemotely.contains(ExactString($0)) && (theirs == nil || yours == nil || t.value($0, index: ti) != y.value($0, index: yi))
        }
        return Changes(remote: remote, local: local, conflicting: conflicting)
    }

    /// Theirs with your changes laid over it: what the MERGE_* modes send.
    static func merged(base: JSONObject?, theirs: JSONObject, yours: JSONObject, ignoring: String) -> JSONObject {
        var out = theirs
        let index = yours.indexForLookups()
        out.update(changes(base: base, theirs: theirs, yours: yours, ignoring: ignoring).local.lazy.map { ($0, yours.value($0, index: index)) })
        return out
    }

    /// This conflict with `record`, a server copy sync down received, as
    /// theirs; nil when the copy kept is as recent (by `modifiedField`).
    /// Theirs must stay the server's latest copy: resolved "theirs", it is
    /// marked clean, and sync down, past the record already, would never
    /// bring the later one.
    func withLaterTheirs(_ record: JSONObject, syncId: Int64, modifiedField: String) -> Conflict? {
        if let kept = theirs.flatMap({ Stamp.read($0[modifiedField]) }), let m = Stamp.read(record[modifiedField]),
           m.ms <= kept.ms {
            return nil
        }
        var later = self
        later.theirs = record
        later.syncId = syncId
        return later
    }

    func json(ignoring: String) -> JSON {
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
