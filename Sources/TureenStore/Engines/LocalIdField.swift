import TureenCore

/// tureen_local_id_fields: per soup, the id field its last
/// tureen_local_upsert named records by. tureen_local_delete takes none, and
/// its events must name a record by the same field as the upsert's did.
/// Keyed by soup id, never reused, like the other sync tables.
extension SyncTables {
    public static func keepLocalIdField(_ tx: SoupTransaction, _ field: String) throws {
        try tx.connection.execute("CREATE TABLE IF NOT EXISTS tureen_local_id_fields (soup INTEGER PRIMARY KEY, field TEXT NOT NULL)")
        let s = try tx.connection.cached(literal: "INSERT OR REPLACE INTO tureen_local_id_fields (soup, field) VALUES (?, ?)")
        defer { s.reset() }
        s.bind(1, tx.soup.id)
        s.bind(2, field)
        try s.step()
    }

    /// The field kept by `keepLocalIdField`; nil before any.
    public static func localIdField(_ tx: SoupTransaction) throws -> String? {
        guard try tx.connection.scalarInt("SELECT count(*) FROM sqlite_master WHERE name = 'tureen_local_id_fields'") == 1 else { return nil }
        let s = try tx.connection.cached(literal: "SELECT field FROM tureen_local_id_fields WHERE soup = ?")
        defer { s.reset() }
        s.bind(1, tx.soup.id)
        return try s.step() ? s.text(0) : nil
    }
}
