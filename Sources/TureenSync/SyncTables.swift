import TureenStore

/// The sync engine's own tables, beside the soups:
/// - tureen_sync_base: per record, the server's copy as last synced (the
///   "base" that merge modes compare with, and whose version goes in If-Match);
/// - tureen_sync_conflicts: records left unsynced because both sides changed.
/// They live in the store, so they are encrypted and commit with the entries.
enum SyncTables {
    static func create(_ c: Connection) throws {
        try c.execute("""
            CREATE TABLE IF NOT EXISTS tureen_sync_base (soup TEXT NOT NULL, record_id TEXT NOT NULL, base TEXT NOT NULL,
              PRIMARY KEY (soup, record_id)) WITHOUT ROWID
            """)
        try c.execute("""
            CREATE TABLE IF NOT EXISTS tureen_sync_conflicts (soup TEXT NOT NULL, entry_id INTEGER NOT NULL,
              record_id TEXT NOT NULL, sync_id INTEGER NOT NULL, base TEXT, theirs TEXT, yours TEXT,
              created INTEGER NOT NULL, PRIMARY KEY (soup, entry_id)) WITHOUT ROWID
            """)
    }

    static func base(_ c: Connection, _ soup: String, _ id: String) throws -> JSONObject? {
        let s = try c.cached("SELECT base FROM tureen_sync_base WHERE soup = ? AND record_id = ?")
        defer { s.reset() }
        s.bind(1, soup)
        s.bind(2, id)
        guard try s.step() else { return nil }
        return try JSONParser.parse(bytes: s.textBytes(0)).objectValue
    }

    static func setBase(_ c: Connection, _ soup: String, _ id: String, _ base: JSONObject?) throws {
        if let b = base {
            let s = try c.cached("INSERT OR REPLACE INTO tureen_sync_base (soup, record_id, base) VALUES (?, ?, ?)")
            defer { s.reset() }
            s.bind(1, soup)
            s.bind(2, id)
            s.bind(3, JSON.object(b).text)
            try s.step()
        } else {
            let s = try c.cached("DELETE FROM tureen_sync_base WHERE soup = ? AND record_id = ?")
            defer { s.reset() }
            s.bind(1, soup)
            s.bind(2, id)
            try s.step()
        }
    }

    static func addConflict(_ c: Connection, _ conflict: Conflict) throws {
        let s = try c.cached("""
            INSERT OR REPLACE INTO tureen_sync_conflicts (soup, entry_id, record_id, sync_id, base, theirs, yours, created)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """)
        defer { s.reset() }
        s.bind(1, conflict.soup)
        s.bind(2, conflict.entryId)
        s.bind(3, conflict.recordId)
        s.bind(4, conflict.syncId)
        for (i, v) in [conflict.base, conflict.theirs, conflict.yours].enumerated() {
            if let o = v { s.bind(5 + i, JSON.object(o).text) } else { s.bindNull(5 + i) }
        }
        s.bind(8, Clock.nowMs())
        try s.step()
    }

    static func conflicts(_ c: Connection, soup: String, entryId: Int64? = nil) throws -> [Conflict] {
        let s = try c.prepare("""
            SELECT entry_id, record_id, sync_id, base, theirs, yours FROM tureen_sync_conflicts
            WHERE soup = ?\(entryId == nil ? "" : " AND entry_id = ?") ORDER BY entry_id
            """)
        s.bind(1, soup)
        if let e = entryId { s.bind(2, e) }
        var out: [Conflict] = []
        func object(_ col: Int) throws -> JSONObject? {
            s.columnType(col) == 5 /* SQLITE_NULL */ ? nil : try JSONParser.parse(bytes: s.textBytes(col)).objectValue
        }
        while try s.step() {
            out.append(Conflict(soup: soup, entryId: s.int64(0), recordId: s.text(1) ?? "", syncId: s.int64(2),
                                base: try object(3), theirs: try object(4), yours: try object(5)))
        }
        return out
    }

    static func removeConflict(_ c: Connection, soup: String, entryId: Int64) throws {
        let s = try c.cached("DELETE FROM tureen_sync_conflicts WHERE soup = ? AND entry_id = ?")
        defer { s.reset() }
        s.bind(1, soup)
        s.bind(2, entryId)
        try s.step()
    }
}
