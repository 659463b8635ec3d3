import TureenCore

/// Where blobs live: in the store itself, so SQLCipher encrypts and
/// authenticates their pages like every entry, and a blob commits (or
/// vanishes) with the transaction that wrote it.
///
/// - tureen_blobs: one row per blob. `digest` is NULL while the blob is
///   still being written (a staging blob, invisible to readers); `touched`
///   is when it was last written or finished, for the grace period that
///   keeps a fresh blob from being collected before an entry refers to it.
/// - tureen_blob_chunks: the bytes, in chunks of `chunkSize`. A chunk's key
///   is its blob's id shifted left 32 bits plus its position, so a blob's
///   chunks are one contiguous key range: read in order, deleted at once.
/// - tureen_blob_wanted: blobs that entries an engine wrote refer to and
///   that are fetched later, with the engine's tag for the fetcher that
///   knows where (column sync_id, its name since the first stores).
/// - tureen_blob_staging: see BlobStaging.
///
/// A single SQLite value may hold at most a gigabyte; chunks keep any blob
/// under that, and keep memory to one chunk while streaming.
public enum BlobTables {
    public static let chunkSize = 256 * 1024

    static func install(_ c: Connection) throws {
        try c.execute("""
            CREATE TABLE IF NOT EXISTS tureen_blobs (id INTEGER PRIMARY KEY AUTOINCREMENT, digest TEXT UNIQUE,
              length INTEGER NOT NULL, content_type TEXT NOT NULL, touched INTEGER NOT NULL)
            """)
        try c.execute("CREATE TABLE IF NOT EXISTS tureen_blob_chunks (id INTEGER PRIMARY KEY, data BLOB NOT NULL)")
        try c.execute("""
            CREATE TABLE IF NOT EXISTS tureen_blob_wanted (digest TEXT PRIMARY KEY, sync_id INTEGER NOT NULL,
              length INTEGER NOT NULL, content_type TEXT NOT NULL)
            """)
        try BlobStaging.install(c)
    }

    /// A stored, complete blob.
    public struct Row: Sendable {
        public let id: Int64
        public let length: Int64
        public let contentType: String
    }

    static func find(_ c: Connection, digest: String) throws -> Row? {
        let s = try c.cached("SELECT id, length, content_type FROM tureen_blobs WHERE digest = ?")
        defer { s.reset() }
        s.bind(1, digest)
        guard try s.step() else { return nil }
        return Row(id: s.int64(0), length: s.int64(1), contentType: s.text(2) ?? BlobRef.defaultContentType)
    }

    static func beginStaging(_ c: Connection, contentType: String, now: Int64) throws -> Int64 {
        let s = try c.cached("INSERT INTO tureen_blobs (digest, length, content_type, touched) VALUES (NULL, 0, ?, ?)")
        defer { s.reset() }
        s.bind(1, contentType)
        s.bind(2, now)
        _ = try s.step()
        return c.lastInsertRowid
    }

    static func chunkKey(_ blob: Int64, _ seq: Int) -> Int64 { blob << 32 | Int64(seq) }

    /// A plain INSERT: a writer only adds chunks after those its blob has
    /// (ids are never reused), so a chunk already there is a fault to
    /// report, not to overwrite; and OR REPLACE cost 2-10% of a 256 MiB
    /// import (a C loop on the system SQLCipher, 8 MiB commits).
    static func writeChunk(_ c: Connection, blob: Int64, seq: Int, _ bytes: UnsafeRawBufferPointer) throws {
        let s = try c.cached("INSERT INTO tureen_blob_chunks (id, data) VALUES (?, ?)")
        defer { s.reset() }
        s.bind(1, chunkKey(blob, seq))
        s.bind(2, blob: bytes)
        _ = try s.step()
    }

    static func touch(_ c: Connection, blob: Int64, now: Int64) throws {
        let s = try c.cached("UPDATE tureen_blobs SET touched = ? WHERE id = ?")
        defer { s.reset() }
        s.bind(1, now)
        s.bind(2, blob)
        _ = try s.step()
    }

    /// Names a staging blob. When the same bytes are stored already, the
    /// staging copy is dropped and the stored one is answered (and touched,
    /// so the grace period covers the entry about to refer to it).
    static func finish(_ c: Connection, blob: Int64, digest: String, length: Int64, now: Int64) throws -> Row {
        if let old = try find(c, digest: digest) {
            try delete(c, blob: blob)
            try touch(c, blob: old.id, now: now)
            return old
        }
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

    /// How many chunks `blob` has.
    static func chunkCount(_ c: Connection, blob: Int64) throws -> Int64 {
        let s = try c.cached("SELECT count(*) FROM tureen_blob_chunks WHERE id BETWEEN ? AND ?")
        defer { s.reset() }
        s.bind(1, chunkKey(blob, 0))
        s.bind(2, chunkKey(blob, 0) | 0xFFFF_FFFF)
        _ = try s.step()
        return s.int64(0)
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
