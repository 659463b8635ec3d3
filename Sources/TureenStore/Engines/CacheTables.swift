import TureenCore

/// The cached-fetch layer's bookkeeping beside its soup (`cache_soup`, whose
/// entries hold the answers): tureen_cache_use keeps, per cached entry, when
/// it was last read and how many bytes its answer takes. It is a table of its
/// own, not a member of the entry, so that a cache hit (which moves the
/// entry up the least-recently-used order) writes no soup entry and sends no
/// change event: only new answers do.
///
/// The store owns the SQL; the cache decides what goes in, through these
/// functions only.
public enum CacheTables {
    /// Installs the table and the soup's trigger (an entry removed by any
    /// path takes its bookkeeping with it). Only generated names reach the SQL.
    public static func watch(_ tx: SoupTransaction) throws {
        try tx.connection.execute("""
            CREATE TABLE IF NOT EXISTS tureen_cache_use (entry_id INTEGER PRIMARY KEY, used_at INTEGER NOT NULL,
              bytes INTEGER NOT NULL)
            """)
        try tx.connection.execute("CREATE INDEX IF NOT EXISTS tureen_cache_use_lru ON tureen_cache_use (used_at, entry_id)")
        let t = tx.soup.table
        try tx.connection.execute("""
            CREATE TRIGGER IF NOT EXISTS \(t)_forget_use AFTER DELETE ON \(t)
            BEGIN DELETE FROM tureen_cache_use WHERE entry_id = old.id; END
            """)
    }

    /// Records that entry `entryId` (taking `bytes`, when it was just
    /// written) is the most recently used. The order is a counter, not a
    /// clock: two uses in one millisecond, or a clock set back, still rank.
    public static func use(_ tx: SoupTransaction, _ entryId: Int64, bytes: Int64? = nil) throws {
        let next = "(SELECT coalesce(max(used_at), 0) + 1 FROM tureen_cache_use)"
        let s = try tx.connection.cached(bytes == nil
            ? "UPDATE tureen_cache_use SET used_at = \(next) WHERE entry_id = ?"
            : "INSERT OR REPLACE INTO tureen_cache_use (entry_id, bytes, used_at) VALUES (?, ?, \(next))")
        defer { s.reset() }
        s.bind(1, entryId)
        if let b = bytes { s.bind(2, b) }
        try s.step()
    }

    /// The bytes every cached answer takes together.
    public static func totalBytes(_ tx: SoupTransaction) throws -> Int64 {
        let s = try tx.connection.cached("SELECT coalesce(sum(bytes), 0) FROM tureen_cache_use")
        defer { s.reset() }
        _ = try s.step()
        return s.int64(0)
    }

    /// Entries with their sizes, least recently used first, sparing `keep`.
    public static func leastRecentlyUsed(_ tx: SoupTransaction, sparing keep: Int64?, limit: Int) throws -> [(id: Int64, bytes: Int64)] {
        let s = try tx.connection.cached("SELECT entry_id, bytes FROM tureen_cache_use WHERE entry_id IS NOT ? ORDER BY used_at, entry_id LIMIT ?")
        defer { s.reset() }
        if let k = keep { s.bind(1, k) } else { s.bindNull(1) }
        s.bind(2, Int64(limit))
        var out: [(Int64, Int64)] = []
        while try s.step() { out.append((s.int64(0), s.int64(1))) }
        return out
    }
}
