import TureenCore

/// The sync engine's own tables, beside the soups:
/// - tureen_sync_bases: per entry, the server's copy as last synced (the
///   "base" that merge modes compare with, and whose version goes in If-Match);
/// - tureen_conflicts: records left unsynced because both sides changed;
/// - tureen_sync_sent_creates: creates sent and not yet confirmed;
/// - tureen_sync_sent: per entry, the copies sync up sent and no answer
///   confirmed yet (see markSent);
/// - tureen_sync_secrets: each sync's whole target, credentials included.
/// They live in the store, so they are encrypted and commit with the entries.
///
/// A base is usually the entry itself: sync down writes the server's record
/// as a clean entry, and until something changes it the two are the same. So
/// sync down stores a NULL base ("the entry is the base"), and a trigger on
/// the soup's table copies the old entry into the base the first time the
/// entry is updated, by the app (its own __local__ marks included) or by
/// Tureen. Writing every record twice cost half of sync down's time and
/// doubled the file (bench/sync_bench.c). The bases stay in a rowid table:
/// WITHOUT ROWID saved sync down 3% of its instructions (one b-tree, not a
/// table and its unique index), but a copied base of about 1 KB does not
/// fit in such a table's cell: editing 10,000 synced entries then cost 125k
/// more instructions per entry (1.27x the CPU) and left a 2.9x larger file.
/// Bases and conflicts are keyed by soup id and entry id, which are never
/// reused (AUTOINCREMENT), so a dropped soup's leftovers cannot be mistaken
/// for those of a new soup of that name.
///
/// The store owns the SQL; the sync engine decides what goes in, through
/// these functions only.
public enum SyncTables {
    public static func create(_ c: Connection) throws {
        try c.execute("""
            CREATE TABLE IF NOT EXISTS tureen_sync_bases (soup INTEGER NOT NULL, entry_id INTEGER NOT NULL, base TEXT,
              UNIQUE (soup, entry_id))
            """)
        try c.execute("""
            CREATE TABLE IF NOT EXISTS tureen_conflicts (soup INTEGER NOT NULL, entry_id INTEGER NOT NULL,
              record_id TEXT NOT NULL, sync_id INTEGER NOT NULL, base TEXT, theirs TEXT, yours TEXT,
              created INTEGER NOT NULL, UNIQUE (soup, entry_id))
            """)
        try c.execute("CREATE TABLE IF NOT EXISTS tureen_sync_sent_creates (soup INTEGER NOT NULL, entry_id INTEGER NOT NULL, UNIQUE (soup, entry_id))")
        // No unique key over the text (an index would hold every copy
        // twice): the caller reads the entry's copies first (sentCopies)
        // and adds only a new one.
        try c.execute("CREATE TABLE IF NOT EXISTS tureen_sync_sent (soup INTEGER NOT NULL, entry_id INTEGER NOT NULL, sent TEXT NOT NULL)")
        try c.execute("CREATE INDEX IF NOT EXISTS tureen_sync_sent_entry ON tureen_sync_sent (soup, entry_id)")
    }

    /// Installs the soup's triggers (once per soup; they go with the soup's
    /// table when the soup is dropped):
    /// - before an entry whose base is lazy is updated, the old entry becomes
    ///   its base;
    /// - after an entry is deleted, by a sync or by the app (remove, clear
    ///   soup), its base and its conflict go too, so no conflict is listed
    ///   for an entry that is gone.
    /// Only generated names and the soup's integer id reach the SQL.
    public static func watch(_ tx: SoupTransaction) throws {
        // The triggers' tables first: SQLite accepts a trigger naming a
        // missing table, then fails every write of the soup.
        try create(tx.connection)
        let t = tx.soup.table, id = tx.soup.id
        try tx.connection.execute("""
            CREATE TRIGGER IF NOT EXISTS \(t)_keep_base BEFORE UPDATE OF soup ON \(t)
            BEGIN UPDATE tureen_sync_bases SET base = old.soup WHERE soup = \(id) AND entry_id = old.id AND base IS NULL; END
            """)
        try tx.connection.execute("""
            CREATE TRIGGER IF NOT EXISTS \(t)_forget_sync AFTER DELETE ON \(t)
            BEGIN DELETE FROM tureen_sync_bases WHERE soup = \(id) AND entry_id = old.id;
                  DELETE FROM tureen_conflicts WHERE soup = \(id) AND entry_id = old.id;
                  DELETE FROM tureen_sync_sent_creates WHERE soup = \(id) AND entry_id = old.id; END
            """)
        // A trigger of its own: stores made before tureen_sync_sent keep
        // their _forget_sync (IF NOT EXISTS) and get this one.
        try tx.connection.execute("""
            CREATE TRIGGER IF NOT EXISTS \(t)_forget_sent AFTER DELETE ON \(t)
            BEGIN DELETE FROM tureen_sync_sent WHERE soup = \(id) AND entry_id = old.id; END
            """)
    }

    /// The server copy entry `entryId` was last synced from, or nil, as kept:
    /// when the entry is its own base, the entry with its bookkeeping.
    public static func storedBase(_ tx: SoupTransaction, _ entryId: Int64) throws -> JSONObject? {
        let s = try tx.connection.cached(literal: "SELECT base FROM tureen_sync_bases WHERE soup = ? AND entry_id = ?")
        defer { s.reset() }
        s.bind(1, tx.soup.id)
        s.bind(2, entryId)
        guard try s.step() else { return nil }
        if s.columnType(0) == 5 /* SQLITE_NULL: the entry is the base */ {
            return try tx.entry(id: entryId)
        }
        return try JSONParser.parse(bytes: s.textBytes(0)).objectValue
    }

    /// Records `base` as the entry's server copy (nil: it has none).
    public static func setBase(_ tx: SoupTransaction, _ entryId: Int64, _ base: JSONObject?) throws {
        if let b = base {
            try writeBase(tx, entryId, JSONWriter.string(.object(b)))
        } else {
            let s = try tx.connection.cached(literal: "DELETE FROM tureen_sync_bases WHERE soup = ? AND entry_id = ?")
            defer { s.reset() }
            s.bind(1, tx.soup.id)
            s.bind(2, entryId)
            try s.step()
        }
    }

    /// Records that the entry, as it is now, is its server copy. The entry
    /// has no base row: it is new (AUTOINCREMENT never gives an id twice),
    /// or the caller removed its base first; one left over would fail the
    /// INSERT rather than be overwritten. Sync down's one statement per
    /// record here, where an UPDATE that found nothing came first. The
    /// caller has made `watch` run on this soup.
    public static func setBaseToEntry(_ tx: SoupTransaction, _ entryId: Int64) throws {
        let s = try tx.connection.cached(literal: "INSERT INTO tureen_sync_bases (soup, entry_id, base) VALUES (?, ?, NULL)")
        defer { s.reset() }
        s.bind(1, tx.soup.id)
        s.bind(2, entryId)
        try s.step()
    }

    /// An UPDATE, then an INSERT when no row was there; not INSERT OR
    /// REPLACE, because a REPLACE that may meet a unique key makes SQLite
    /// keep a statement journal, and SQLCipher encrypts every page it puts
    /// there: once per record, that was most of sync down's own time
    /// (10,000 bases: 0.62 s against 0.24 s by hand, in one transaction).
    private static func writeBase(_ tx: SoupTransaction, _ entryId: Int64, _ text: String?) throws {
        let c = tx.connection
        for sql in ["UPDATE tureen_sync_bases SET base = ?3 WHERE soup = ?1 AND entry_id = ?2",
                    "INSERT INTO tureen_sync_bases (soup, entry_id, base) VALUES (?1, ?2, ?3)"] {
            let s = try c.cached(sql)
            defer { s.reset() }
            s.bind(1, tx.soup.id)
            s.bind(2, entryId)
            if let t = text { s.bind(3, t) } else { s.bindNull(3) }
            try s.step()
            if c.changes > 0 { return }
        }
    }

    public static func addConflict(_ tx: SoupTransaction, _ conflict: Conflict) throws {
        let s = try tx.connection.cached("""
            INSERT OR REPLACE INTO tureen_conflicts (soup, entry_id, record_id, sync_id, base, theirs, yours, created)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """)
        defer { s.reset() }
        s.bind(1, tx.soup.id)
        s.bind(2, conflict.entryId)
        s.bind(3, conflict.recordId)
        s.bind(4, conflict.syncId)
        for (i, v) in [conflict.base, conflict.theirs, conflict.yours].enumerated() {
            if let o = v { s.bind(5 + i, JSONWriter.string(.object(o))) } else { s.bindNull(5 + i) }
        }
        s.bind(8, Clock.nowMs())
        try s.step()
    }

    public static func conflicts(_ tx: SoupTransaction, entryId: Int64? = nil) throws -> [Conflict] {
        let s = try tx.connection.prepare("""
            SELECT entry_id, record_id, sync_id, base, theirs, yours FROM tureen_conflicts
            WHERE soup = ?\(entryId == nil ? "" : " AND entry_id = ?") ORDER BY entry_id
            """)
        s.bind(1, tx.soup.id)
        if let e = entryId { s.bind(2, e) }
        var out: [Conflict] = []
        func object(_ col: Int) throws -> JSONObject? {
            s.columnType(col) == 5 /* SQLITE_NULL */ ? nil : try JSONParser.parse(bytes: s.textBytes(col)).objectValue
        }
        while try s.step() {
            out.append(Conflict(entryId: s.int64(0), recordId: s.text(1) ?? "", syncId: s.int64(2),
                                base: try object(3), theirs: try object(4), yours: try object(5)))
        }
        return out
    }

    /// Records that a create of the entry is about to be sent: committed
    /// before the request, so even a process killed while it is out leaves
    /// the mark. Until the create is confirmed, the server may have the record.
    public static func markCreateSent(_ tx: SoupTransaction, _ entryId: Int64) throws {
        try sentCreate(tx, "INSERT OR IGNORE INTO tureen_sync_sent_creates (soup, entry_id) VALUES (?, ?)", entryId)
    }

    public static func forgetCreateSent(_ tx: SoupTransaction, _ entryId: Int64) throws {
        try sentCreate(tx, "DELETE FROM tureen_sync_sent_creates WHERE soup = ? AND entry_id = ?", entryId)
    }

    /// Whether a create of the entry was sent and never confirmed.
    public static func createWasSent(_ tx: SoupTransaction, _ entryId: Int64) throws -> Bool {
        try create(tx.connection)
        return try sentCreate(tx, "SELECT 1 FROM tureen_sync_sent_creates WHERE soup = ? AND entry_id = ?", entryId)
    }

    @discardableResult
    private static func sentCreate(_ tx: SoupTransaction, _ sql: String, _ entryId: Int64) throws -> Bool {
        let s = try tx.connection.cached(sql)
        defer { s.reset() }
        s.bind(1, tx.soup.id)
        s.bind(2, entryId)
        return try s.step()
    }

    /// Records a copy of the entry that sync up is about to send, committed
    /// before the request like markCreateSent: the server may hold it from
    /// then on, though no answer says so (a process killed while it was
    /// out, a connection lost after the server's commit). Sync down then
    /// recognises it as this device's own write. Kept until an answer
    /// confirms a copy of the entry (forgetSent) or the entry goes.
    public static func markSent(_ tx: SoupTransaction, _ entryId: Int64, _ copy: JSONObject) throws {
        let s = try tx.connection.cached(literal: "INSERT INTO tureen_sync_sent (soup, entry_id, sent) VALUES (?, ?, ?)")
        defer { s.reset() }
        s.bind(1, tx.soup.id)
        s.bind(2, entryId)
        s.bind(3, JSONWriter.string(.object(copy)))
        try s.step()
    }

    public static func forgetSent(_ tx: SoupTransaction, _ entryId: Int64) throws {
        let s = try tx.connection.cached(literal: "DELETE FROM tureen_sync_sent WHERE soup = ? AND entry_id = ?")
        defer { s.reset() }
        s.bind(1, tx.soup.id)
        s.bind(2, entryId)
        try s.step()
    }

    /// The copies of the entry sent and not confirmed (see markSent). Asked
    /// once per change sync up sends: the caller has made `watch` run on
    /// this soup, so the table is there.
    public static func sentCopies(_ tx: SoupTransaction, _ entryId: Int64) throws -> [JSONObject] {
        let s = try tx.connection.cached(literal: "SELECT sent FROM tureen_sync_sent WHERE soup = ? AND entry_id = ?")
        defer { s.reset() }
        s.bind(1, tx.soup.id)
        s.bind(2, entryId)
        var out: [JSONObject] = []
        while try s.step() {
            if let o = try JSONParser.parse(bytes: s.textBytes(0)).objectValue { out.append(o) }
        }
        return out
    }

    public static func removeConflict(_ tx: SoupTransaction, entryId: Int64) throws {
        let s = try tx.connection.cached(literal: "DELETE FROM tureen_conflicts WHERE soup = ? AND entry_id = ?")
        defer { s.reset() }
        s.bind(1, tx.soup.id)
        s.bind(2, entryId)
        try s.step()
    }

    /// Keeps the whole target of sync `syncId`, inside the caller's transaction.
    public static func keepTarget(_ c: Connection, syncId: Int64, target: JSON) throws {
        try c.execute("CREATE TABLE IF NOT EXISTS tureen_sync_secrets (sync_id INTEGER PRIMARY KEY, target TEXT NOT NULL)")
        let s = try c.cached("INSERT OR REPLACE INTO tureen_sync_secrets (sync_id, target) VALUES (?, ?)")
        defer { s.reset() }
        s.bind(1, syncId)
        s.bind(2, JSONWriter.string(target))
        try s.step()
    }

    /// Forgets the target of a deleted sync, inside the caller's transaction.
    public static func forgetTarget(_ c: Connection, syncId: Int64) throws {
        try c.execute("CREATE TABLE IF NOT EXISTS tureen_sync_secrets (sync_id INTEGER PRIMARY KEY, target TEXT NOT NULL)")
        let s = try c.cached("DELETE FROM tureen_sync_secrets WHERE sync_id = ?")
        defer { s.reset() }
        s.bind(1, syncId)
        try s.step()
    }

    /// The whole target kept for sync `syncId`; nil when none is kept (a
    /// store older than this table, or a state saved before it). Only reads,
    /// so it may run in a read transaction.
    public static func keptTarget(_ c: Connection, syncId: Int64) throws -> JSON? {
        guard try c.scalarInt("SELECT count(*) FROM sqlite_master WHERE name = 'tureen_sync_secrets'") == 1 else { return nil }
        let s = try c.cached("SELECT target FROM tureen_sync_secrets WHERE sync_id = ?")
        defer { s.reset() }
        s.bind(1, syncId)
        return try s.step() ? try JSONParser.parse(bytes: s.textBytes(0)) : nil
    }
}
