import TureenCore

/// Downloads being staged, so that one a crash (or a failed run) cut off
/// goes on from its bytes in the next run instead of starting afresh.
///
/// - tureen_blob_staging: one row per staging blob of a download: the
///   digest it must hash to and the writer that owns it (LiveOwner's
///   text). The row goes with the blob when it is named or deleted.
///
/// A writer checks that the row still names it each time it touches its
/// blob and before it names it, and a download that takes a blob over
/// seals what it keeps into a new file that replaces the old one
/// (BlobWriter.resuming): a writer whose blob another took over writes into
/// a file nothing reads and fails, and two writers never add pieces to one
/// file.
enum BlobStaging {
    static func install(_ c: Connection) throws {
        try c.execute("""
            CREATE TABLE IF NOT EXISTS tureen_blob_staging (blob INTEGER PRIMARY KEY, digest TEXT NOT NULL,
              owner TEXT NOT NULL)
            """)
        try c.execute("CREATE INDEX IF NOT EXISTS tureen_blob_staging_digest ON tureen_blob_staging (digest)")
    }

    static func register(_ c: Connection, blob: Int64, digest: String, owner: LiveOwner) throws {
        let s = try c.cached("INSERT INTO tureen_blob_staging (blob, digest, owner) VALUES (?, ?, ?)")
        defer { s.reset() }
        s.bind(1, blob)
        s.bind(2, digest)
        s.bind(3, owner.text)
        _ = try s.step()
    }

    static func owns(_ c: Connection, blob: Int64, owner: LiveOwner) throws -> Bool {
        let s = try c.cached("SELECT owner FROM tureen_blob_staging WHERE blob = ?")
        defer { s.reset() }
        s.bind(1, blob)
        guard try s.step() else { return false }
        return s.text(0) == owner.text
    }

    static func claim(_ c: Connection, blob: Int64, owner: LiveOwner) throws {
        let s = try c.cached("UPDATE tureen_blob_staging SET owner = ? WHERE blob = ?")
        defer { s.reset() }
        s.bind(1, owner.text)
        s.bind(2, blob)
        _ = try s.step()
    }

    /// Leaves `blob` to whichever download comes next, if `owner` still
    /// holds it (an owner text LiveOwner cannot read is nobody's).
    static func disown(_ c: Connection, blob: Int64, owner: LiveOwner) throws {
        let s = try c.cached("UPDATE tureen_blob_staging SET owner = '' WHERE blob = ? AND owner = ?")
        defer { s.reset() }
        s.bind(1, blob)
        s.bind(2, owner.text)
        _ = try s.step()
    }

    /// The staging blobs of downloads of `digest` and their owners, the
    /// most recently written first. Those a store written before staged
    /// inside itself are not taken over: collection removes them.
    static func candidates(_ c: Connection, digest: String) throws -> [(blob: Int64, owner: String)] {
        let s = try c.cached("""
            SELECT s.blob, s.owner FROM tureen_blob_staging s JOIN tureen_blobs b ON b.id = s.blob
            WHERE s.digest = ? AND b.digest IS NULL AND b.in_file = 1 ORDER BY b.touched DESC
            """)
        defer { s.reset() }
        s.bind(1, digest)
        var out: [(Int64, String)] = []
        while try s.step() { out.append((s.int64(0), s.text(1) ?? "")) }
        return out
    }

    static func remove(_ c: Connection, blob: Int64) throws {
        let s = try c.cached("DELETE FROM tureen_blob_staging WHERE blob = ?")
        defer { s.reset() }
        s.bind(1, blob)
        _ = try s.step()
    }
}
