import TureenStore

/// A target's credentials, kept apart from its sync state.
///
/// States live in `syncs_soup`, which the app reads with queries and Smart
/// SQL, and they reach progress callbacks and logs. So a state shows its
/// target with every secret (a bearer token, a password, every extra header's
/// value, which is where API keys go) replaced by "<redacted>", and the whole
/// target is kept in `tureen_sync_secrets`, a table of the encrypted store
/// that Smart SQL may not read (its authorizer refuses tureen_* tables) and
/// that no query names.
enum TargetSecrets {
    static let redacted = JSON.string("<redacted>")

    /// The target as states show it.
    static func redact(_ target: JSON) -> JSON {
        guard var t = target.objectValue else { return target }
        if var auth = t["auth"]?.objectValue {
            for k in ["bearer", "password"] where auth[k] != nil { auth[k] = redacted }
            t["auth"] = .object(auth)
        }
        if var headers = t["headers"]?.objectValue {
            for k in headers.keys { headers[k] = redacted }
            t["headers"] = .object(headers)
        }
        return .object(t)
    }

    static func createTable(_ c: Connection) throws {
        try c.execute("CREATE TABLE IF NOT EXISTS tureen_sync_secrets (sync_id INTEGER PRIMARY KEY, target TEXT NOT NULL)")
    }

    /// Keeps the whole target of sync `syncId`, inside the caller's transaction.
    static func save(_ c: Connection, syncId: Int64, target: JSON) throws {
        try createTable(c)
        let s = try c.cached("INSERT OR REPLACE INTO tureen_sync_secrets (sync_id, target) VALUES (?, ?)")
        defer { s.reset() }
        s.bind(1, syncId)
        s.bind(2, target.text)
        try s.step()
    }

    /// Forgets the target of a deleted sync, inside the caller's transaction.
    static func forget(_ c: Connection, syncId: Int64) throws {
        try createTable(c)
        let s = try c.cached("DELETE FROM tureen_sync_secrets WHERE sync_id = ?")
        defer { s.reset() }
        s.bind(1, syncId)
        try s.step()
    }

    /// The whole target kept for sync `syncId`; nil when none is kept (a
    /// store older than this table, or a state saved before it). Only reads.
    static func target(_ c: Connection, syncId: Int64) throws -> JSON? {
        guard try c.scalarInt("SELECT count(*) FROM sqlite_master WHERE name = 'tureen_sync_secrets'") == 1 else { return nil }
        let s = try c.cached("SELECT target FROM tureen_sync_secrets WHERE sync_id = ?")
        defer { s.reset() }
        s.bind(1, syncId)
        return try s.step() ? try JSONParser.parse(bytes: s.textBytes(0)) : nil
    }

    /// Whether a state read from `syncs_soup` still holds its secrets (saved
    /// before they were kept apart): they must move to the table.
    static func needsMoving(_ state: SyncState, kept: JSON?) -> Bool {
        kept == nil && redact(state.target) != state.target
    }
}
