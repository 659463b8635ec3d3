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

    /// The whole target of a state read from `syncs_soup`. A state saved
    /// before secrets were kept apart still holds them: they move here now.
    static func restore(_ c: Connection, _ state: inout SyncState) throws {
        try createTable(c)
        let s = try c.cached("SELECT target FROM tureen_sync_secrets WHERE sync_id = ?")
        defer { s.reset() }
        s.bind(1, state.id)
        if try s.step() {
            state.target = try JSONParser.parse(bytes: s.textBytes(0))
        } else if redact(state.target) != state.target {
            s.reset()
            try save(c, syncId: state.id, target: state.target)
        }
    }
}
