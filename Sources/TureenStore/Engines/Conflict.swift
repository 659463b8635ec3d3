import TureenCore

/// A record changed on both sides, as the sync engine keeps it: the base copy
/// from the last sync, the server's copy ("theirs", nil when deleted there)
/// and the local one ("yours", nil when deleted here). The store only keeps
/// it; comparing the copies is the sync engine's business.
public struct Conflict {
    public var entryId: Int64
    public var recordId: String
    public var syncId: Int64
    public var base: JSONObject?
    public var theirs: JSONObject?
    public var yours: JSONObject?

    public init(entryId: Int64, recordId: String, syncId: Int64, base: JSONObject?, theirs: JSONObject?, yours: JSONObject?) {
        self.entryId = entryId
        self.recordId = recordId
        self.syncId = syncId
        self.base = base
        self.theirs = theirs
        self.yours = yours
    }
}
