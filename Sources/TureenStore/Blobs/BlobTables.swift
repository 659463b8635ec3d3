import TureenCore

/// What the store knows of its blobs. Their bytes are in files beside the
/// store (BlobDirectory, SealedBlob); these tables name them.
///
/// - tureen_blobs: one row per blob. `digest` is NULL while the blob is
///   still being written (a staging blob, invisible to readers); `touched`
///   is when it was last written or finished, for the grace period that
///   keeps a fresh blob from being collected before an entry refers to it.
///   `in_file` is 1 for a blob whose bytes are in its file, 0 for one a
///   store written before kept in tureen_blob_chunks (still read, never
///   written: see BlobChunks).
/// - tureen_blob_chunks: the bytes of those older blobs, in chunks of
///   `chunkSize`. A chunk's key is its blob's id shifted left 32 bits plus
///   its position, so a blob's chunks are one contiguous key range.
/// - tureen_blob_key: the key the files are sealed under (BlobKey).
/// - tureen_blob_wanted: blobs that entries an engine wrote refer to and
///   that are fetched later, with the engine's tag for the fetcher that
///   knows where (column sync_id, its name since the first stores).
/// - tureen_blob_staging: see BlobStaging.
///
/// A row's id names its files, and AUTOINCREMENT never gives a committed
/// id again: a file removed after its row's deletion committed can only be
/// that row's, whatever was written since.
public enum BlobTables {
    static func install(_ c: Connection) throws {
        try c.execute("""
            CREATE TABLE IF NOT EXISTS tureen_blobs (id INTEGER PRIMARY KEY AUTOINCREMENT, digest TEXT UNIQUE,
              length INTEGER NOT NULL, content_type TEXT NOT NULL, touched INTEGER NOT NULL,
              in_file INTEGER NOT NULL DEFAULT 0)
            """)
        // Stores written before kept every blob in tureen_blob_chunks:
        // their rows get 0, new rows 1.
        let columns = try c.prepare("PRAGMA table_info(tureen_blobs)")
        var inFile = false
        while try columns.step() { inFile = inFile || columns.text(1) == "in_file" }
        if !inFile { try c.execute("ALTER TABLE tureen_blobs ADD COLUMN in_file INTEGER NOT NULL DEFAULT 0") }
        try c.execute("CREATE TABLE IF NOT EXISTS tureen_blob_chunks (id INTEGER PRIMARY KEY, data BLOB NOT NULL)")
        try c.execute("""
            CREATE TABLE IF NOT EXISTS tureen_blob_wanted (digest TEXT PRIMARY KEY, sync_id INTEGER NOT NULL,
              length INTEGER NOT NULL, content_type TEXT NOT NULL)
            """)
        try BlobStaging.install(c)
        try BlobKey.install(c)
    }

    /// A stored, complete blob.
    public struct Row: Sendable {
        public let id: Int64
        public let length: Int64
        public let contentType: String
        /// In its file, not in tureen_blob_chunks.
        let inFile: Bool
    }

    static func find(_ c: Connection, digest: String) throws -> Row? {
        let s = try c.cached("SELECT id, length, content_type, in_file FROM tureen_blobs WHERE digest = ?")
        defer { s.reset() }
        s.bind(1, digest)
        guard try s.step() else { return nil }
        return Row(id: s.int64(0), length: s.int64(1), contentType: s.text(2) ?? BlobRef.defaultContentType, inFile: s.int64(3) != 0)
    }

    static func beginStaging(_ c: Connection, contentType: String, now: Int64) throws -> Int64 {
        let s = try c.cached("INSERT INTO tureen_blobs (digest, length, content_type, touched, in_file) VALUES (NULL, 0, ?, ?, 1)")
        defer { s.reset() }
        s.bind(1, contentType)
        s.bind(2, now)
        _ = try s.step()
        return c.lastInsertRowid
    }

    static func chunkKey(_ blob: Int64, _ seq: Int) -> Int64 { blob << 32 | Int64(seq) }

    static func touch(_ c: Connection, blob: Int64, now: Int64) throws {
        let s = try c.cached("UPDATE tureen_blobs SET touched = ? WHERE id = ?")
        defer { s.reset() }
        s.bind(1, now)
        s.bind(2, blob)
        _ = try s.step()
    }

    /// Names staging blob `blob`, whose file is in place: readers see it
    /// from the commit on. The caller made sure no blob has this digest.
    static func name(_ c: Connection, blob: Int64, digest: String, length: Int64, now: Int64) throws -> Row {
        try BlobStaging.remove(c, blob: blob)
        let s = try c.cached("UPDATE tureen_blobs SET digest = ?, length = ?, touched = ? WHERE id = ?")
        defer { s.reset() }
        s.bind(1, digest)
        s.bind(2, length)
        s.bind(3, now)
        s.bind(4, blob)
        _ = try s.step()
        guard let row = try find(c, digest: digest) else { throw TureenError(.internal, "blob \(digest) vanished while it was named") }
        return row
    }

    /// Deletes a blob's row (and the chunks a store written before kept);
    /// its files are the caller's to remove once that commits.
    static func delete(_ c: Connection, blob: Int64) throws {
        let chunks = try c.cached("DELETE FROM tureen_blob_chunks WHERE id BETWEEN ? AND ?")
        defer { chunks.reset() }
        chunks.bind(1, chunkKey(blob, 0))
        chunks.bind(2, chunkKey(blob, 0) | 0xFFFF_FFFF)
        _ = try chunks.step()
        try BlobStaging.remove(c, blob: blob)
        let row = try c.cached("DELETE FROM tureen_blobs WHERE id = ?")
        defer { row.reset() }
        row.bind(1, blob)
        _ = try row.step()
    }

    /// Copies chunk `seq` of `blob` into `buffer`; its length (nothing is
    /// copied when it is longer than the buffer), or nil when it does not
    /// exist.
    static func readChunk(_ c: Connection, blob: Int64, seq: Int, into buffer: UnsafeMutableRawBufferPointer) throws -> Int? {
        try c.readBlob(table: "tureen_blob_chunks", column: "data", row: chunkKey(blob, seq), into: buffer)
    }

    /// Whether `blob` is a staging blob (not removed, not yet named).
    static func isStaging(_ c: Connection, blob: Int64) throws -> Bool {
        let s = try c.cached("SELECT 1 FROM tureen_blobs WHERE id = ? AND digest IS NULL")
        defer { s.reset() }
        s.bind(1, blob)
        return try s.step()
    }

    /// The ids of every blob, complete or staging: a file named for
    /// another is nobody's.
    static func ids(_ c: Connection) throws -> Set<Int64> {
        let s = try c.prepare("SELECT id FROM tureen_blobs")
        var out = Set<Int64>()
        while try s.step() { out.insert(s.int64(0)) }
        return out
    }

    /// Blobs last written or finished at or before `cutoff`: (id, digest or nil for
    /// an abandoned staging blob).
    static func olderThan(_ c: Connection, _ cutoff: Int64) throws -> [(id: Int64, digest: String?)] {
        let s = try c.prepare("SELECT id, digest FROM tureen_blobs WHERE touched <= ?")
        s.bind(1, cutoff)
        var out: [(Int64, String?)] = []
        while try s.step() { out.append((s.int64(0), s.text(1))) }
        return out
    }

    /// The entry texts of every table that may keep a blob alive: each
    /// soup, and conflicts waiting for the app (either side may be chosen).
    static func referringTexts(_ c: Connection, _ body: (UnsafeBufferPointer<UInt8>) throws -> Void) throws {
        // The texts that spell the prefix, and those that may spell it with
        // escapes (see BlobRef.digests(inText:)).
        func mayRefer(_ column: String) -> String {
            "(\(column) LIKE '%\(BlobRef.digestPrefix)%' OR \(column) GLOB '*\\u00[2-7]*')"
        }
        var queries: [String] = []
        let soups = try c.prepare("SELECT id FROM tureen_soups")
        while try soups.step() { queries.append("SELECT soup FROM \(Soup.tableName(id: soups.int64(0))) WHERE \(mayRefer("soup"))") }
        if try c.scalarInt("SELECT count(*) FROM sqlite_master WHERE name = 'tureen_conflicts'") ?? 0 > 0 {
            queries.append("SELECT theirs FROM tureen_conflicts WHERE \(mayRefer("theirs"))")
            queries.append("SELECT yours FROM tureen_conflicts WHERE \(mayRefer("yours"))")
        }
        for q in queries {
            let s = try c.prepare(q)
            while try s.step() { try body(s.textBytes(0)) }
        }
    }

    /// Forgets wanted blobs that no entry refers to any more.
    static func forgetWanted(_ c: Connection, keeping referenced: Set<String>) throws {
        let s = try c.prepare("SELECT digest FROM tureen_blob_wanted")
        var gone: [String] = []
        while try s.step() { if let d = s.text(0), !referenced.contains(d) { gone.append(d) } }
        for d in gone { try unwant(c, digest: d) }
    }

    static func want(_ c: Connection, _ ref: BlobRef, owner: Int64) throws {
        let s = try c.cached("INSERT OR REPLACE INTO tureen_blob_wanted (digest, sync_id, length, content_type) VALUES (?, ?, ?, ?)")
        defer { s.reset() }
        s.bind(1, ref.digest)
        s.bind(2, owner)
        s.bind(3, ref.length)
        s.bind(4, ref.contentType)
        _ = try s.step()
    }

    static func wantedBy(_ c: Connection, digest: String) throws -> (owner: Int64, ref: BlobRef)? {
        let s = try c.cached("SELECT sync_id, length, content_type FROM tureen_blob_wanted WHERE digest = ?")
        defer { s.reset() }
        s.bind(1, digest)
        guard try s.step() else { return nil }
        return (s.int64(0), BlobRef(digest: digest, length: s.int64(1), contentType: s.text(2)))
    }

    static func unwant(_ c: Connection, digest: String) throws {
        let s = try c.cached("DELETE FROM tureen_blob_wanted WHERE digest = ?")
        defer { s.reset() }
        s.bind(1, digest)
        _ = try s.step()
    }
}
