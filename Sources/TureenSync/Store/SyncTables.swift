import TureenStore
import TureenCore

/// The sync engine's own tables, beside the soups, as the store's side
/// records (per entry, dying with it) and keyed tables:
/// - tureen_sync_bases: per entry, the server's copy as last synced (the
///   "base" that merge modes compare with, and whose version goes in If-Match);
/// - tureen_conflicts: records left unsynced because both sides changed;
/// - tureen_sync_sent_creates: creates sent and not yet confirmed;
/// - tureen_sync_sent: per entry, the copies sync up sent and no answer
///   confirmed yet, or sentDelete for a delete (see markSent);
/// - tureen_sync_secrets: each sync's whole target, credentials included.
/// They live in the store, so they are encrypted and commit with the entries.
///
/// A base is usually the entry itself: sync down writes the server's record
/// as a clean entry, and until something changes it the two are the same. So
/// sync down stores a NULL base ("the entry is the base"), and the store's
/// snapshot slot copies the old entry into the base the first time the
/// entry is updated, by the app (its own __local__ marks included) or by
/// Tureen. Writing every record twice cost half of sync down's time and
/// doubled the file (bench/sync_bench.c). The bases stay in a rowid table:
/// WITHOUT ROWID saved sync down 3% of its instructions (one b-tree, not a
/// table and its unique index), but a copied base of about 1 KB does not
/// fit in such a table's cell: editing 10,000 synced entries then cost 125k
/// more instructions per entry (1.27x the CPU) and left a 2.9x larger file.
/// Bases and conflicts are keyed by soup id and entry id, which are never
/// reused, so a dropped soup's leftovers cannot be mistaken for those of a
/// new soup of that name.
///
/// The names, columns and triggers are those of the first stores: the
/// store creates the same objects from these declarations.
enum SyncTables {
    enum Table {
        static let bases = SideTable("tureen_sync_bases", columns: [EngineColumn("base", .json, nullable: true)],
                                     snapshot: .init(column: "base", trigger: "keep_base"), forgetTrigger: "forget_sync")
        static let conflicts = SideTable("tureen_conflicts", columns: [
            EngineColumn("record_id", .text), EngineColumn("sync_id", .integer), EngineColumn("base", .json, nullable: true),
            EngineColumn("theirs", .json, nullable: true), EngineColumn("yours", .json, nullable: true),
            EngineColumn("created", .integer),
        ], forgetTrigger: "forget_sync")
        static let sentCreates = SideTable("tureen_sync_sent_creates", columns: [], forgetTrigger: "forget_sync")
        // No unique key over the text (an index would hold every copy twice):
        // the caller reads the entry's copies first (sentCopies) and adds only
        // a new one. A trigger of its own: stores made before tureen_sync_sent
        // keep their _forget_sync (IF NOT EXISTS) and get this one.
        static let sent = SideTable("tureen_sync_sent", columns: [EngineColumn("sent", .json)], manyPerEntry: true,
                                    indexes: [.init("tureen_sync_sent_entry", ["soup", "entry_id"])], forgetTrigger: "forget_sent")
        static let secrets = KeyedTable("tureen_sync_secrets", key: "sync_id", columns: [EngineColumn("target", .json)])

        /// In the order of their triggers in the first stores.
        static let all = [bases, conflicts, sentCreates, sent]
    }

    static func create(_ t: StoreTransaction) throws {
        try t.create(Table.all)
    }

    /// Attaches the tables to the soup (before an entry whose base is lazy
    /// is updated, the old entry becomes its base; after an entry is
    /// deleted, by a sync or by the app, its base, conflict and sent
    /// copies go too, so no conflict is listed for an entry that is gone).
    static func watch(_ tx: SoupTransaction) throws {
        try tx.attach(Table.all)
    }

    /// The server copy entry `entryId` was last synced from, or nil, as kept:
    /// when the entry is its own base, the entry with its bookkeeping.
    static func storedBase(_ tx: SoupTransaction, _ entryId: Int64) throws -> JSONObject? {
        guard let row = try tx.side(Table.bases).read(entryId, ["base"]) else { return nil }
        if row[0] == .null { return try tx.entry(id: entryId) }  // the entry is the base
        return row[0].jsonValue?.objectValue
    }

    /// Records `base` as the entry's server copy (nil: it has none).
    static func setBase(_ tx: SoupTransaction, _ entryId: Int64, _ base: JSONObject?) throws {
        if let b = base {
            try tx.side(Table.bases).write(entryId, [("base", .json(.object(b)))])
        } else {
            try tx.side(Table.bases).delete(entryId)
        }
    }

    /// Records that the entry, as it is now, is its server copy. The entry
    /// has no base row: it is new (AUTOINCREMENT never gives an id twice),
    /// or the caller removed its base first; one left over would fail the
    /// INSERT rather than be overwritten. Sync down's one statement per
    /// record here, where an UPDATE that found nothing came first. The
    /// caller has made `watch` run on this soup.
    static func setBaseToEntry(_ tx: SoupTransaction, _ entryId: Int64) throws {
        try tx.side(Table.bases).insert(entryId, [("base", .null)])
    }

    static func addConflict(_ tx: SoupTransaction, _ conflict: Conflict) throws {
        func copy(_ o: JSONObject?) -> EngineValue { o.map { .json(.object($0)) } ?? .null }
        try tx.side(Table.conflicts).insert(conflict.entryId, [
            ("record_id", .text(conflict.recordId)), ("sync_id", .integer(conflict.syncId)),
            ("base", copy(conflict.base)), ("theirs", copy(conflict.theirs)), ("yours", copy(conflict.yours)),
            ("created", .integer(Clock.nowMs())),
        ], existing: .replace)
    }

    static func conflicts(_ tx: SoupTransaction, entryId: Int64? = nil) throws -> [Conflict] {
        try tx.side(Table.conflicts).rows(["record_id", "sync_id", "base", "theirs", "yours"], entryId: entryId).map { r in
            Conflict(entryId: r.key, recordId: r.values[0].stringValue ?? "", syncId: r.values[1].int64Value ?? 0,
                     base: r.values[2].jsonValue?.objectValue, theirs: r.values[3].jsonValue?.objectValue,
                     yours: r.values[4].jsonValue?.objectValue)
        }
    }

    static func removeConflict(_ tx: SoupTransaction, entryId: Int64) throws {
        try tx.side(Table.conflicts).delete(entryId)
    }

    /// Records that a create of the entry is about to be sent: committed
    /// before the request, so even a process killed while it is out leaves
    /// the mark. Until the create is confirmed, the server may have the record.
    static func markCreateSent(_ tx: SoupTransaction, _ entryId: Int64) throws {
        try tx.side(Table.sentCreates).insert(entryId, [], existing: .ignore)
    }

    static func forgetCreateSent(_ tx: SoupTransaction, _ entryId: Int64) throws {
        try tx.side(Table.sentCreates).delete(entryId)
    }

    /// Whether a create of the entry was sent and never confirmed.
    static func createWasSent(_ tx: SoupTransaction, _ entryId: Int64) throws -> Bool {
        try create(tx.transaction)
        return try tx.side(Table.sentCreates).contains(entryId)
    }

    /// Records a copy of the entry that sync up is about to send, committed
    /// before the request like markCreateSent: the server may hold it from
    /// then on, though no answer says so (a process killed while it was
    /// out, a connection lost after the server's commit). Sync down then
    /// recognises it as this device's own write. Kept until an answer
    /// confirms a copy of the entry (forgetSent) or the entry goes.
    static func markSent(_ tx: SoupTransaction, _ entryId: Int64, _ copy: JSONObject) throws {
        try tx.side(Table.sent).insert(entryId, [("sent", .json(.object(copy)))])
    }

    /// What markSent keeps for a delete: no copy of a record (each names
    /// its id), so no server copy is ever taken for it.
    static let sentDelete = JSONObject()

    static func forgetSent(_ tx: SoupTransaction, _ entryId: Int64) throws {
        try tx.side(Table.sent).delete(entryId)
    }

    /// The copies of the entry sent and not confirmed (see markSent). Asked
    /// once per change sync up sends: the caller has made `watch` run on
    /// this soup, so the table is there.
    static func sentCopies(_ tx: SoupTransaction, _ entryId: Int64) throws -> [JSONObject] {
        try tx.side(Table.sent).rows(["sent"], entryId: entryId).compactMap { $0.values[0].jsonValue?.objectValue }
    }

    /// Keeps the whole target of sync `syncId`, inside the caller's transaction.
    static func keepTarget(_ t: StoreTransaction, syncId: Int64, target: JSON) throws {
        try t.keyed(Table.secrets).create()
        try t.keyed(Table.secrets).put(syncId, [("target", .json(target))])
    }

    /// Forgets the target of a deleted sync, inside the caller's transaction.
    static func forgetTarget(_ t: StoreTransaction, syncId: Int64) throws {
        try t.keyed(Table.secrets).create()
        try t.keyed(Table.secrets).delete(syncId)
    }

    /// The whole target kept for sync `syncId`; nil when none is kept (a
    /// store older than this table, or a state saved before it). Only reads,
    /// so it may run in a read transaction.
    static func keptTarget(_ t: StoreTransaction, syncId: Int64) throws -> JSON? {
        guard try t.keyed(Table.secrets).exists() else { return nil }
        return try t.keyed(Table.secrets).get(syncId, ["target"])?[0].jsonValue
    }
}
