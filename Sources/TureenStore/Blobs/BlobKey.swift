import TureenCore

/// The key blob files are sealed under: 32 random bytes made with the
/// blob tables, kept in the one row of tureen_blob_key.
///
/// Kept in the store, it is wrapped by the store's own key: SQLCipher
/// encrypts and authenticates the page that holds it. A rekey copies the
/// row into the file re-encrypted under the new key, so the blob key, and
/// every blob file, stay as they are: rekeying re-wraps 32 bytes instead of
/// re-encrypting gigabytes. (An unencrypted store keeps it in clear: its
/// blob files are then only authenticated, as its pages are not even that.)
enum BlobKey {
    static func install(_ c: Connection) throws {
        try c.execute("CREATE TABLE IF NOT EXISTS tureen_blob_key (id INTEGER PRIMARY KEY CHECK (id = 1), key BLOB NOT NULL)")
        guard try c.scalarInt("SELECT count(*) FROM tureen_blob_key") == 0 else { return }
        let s = try c.cached("INSERT INTO tureen_blob_key (id, key) VALUES (1, ?)")
        defer { s.reset() }
        let key = try SecureRandom.bytes(AESGCM.keySize)
        key.withUnsafeBytes { s.bind(1, blob: $0) }
        _ = try s.step()
    }

    /// Fails unless the store's key is still `key`: one made in a
    /// transaction that rolled back is gone, and what a writer sealed
    /// under it could never be read.
    static func require(_ key: SecretKey, _ c: Connection) throws {
        let now = try load(c)
        let same = key.withBytes { a in now.withBytes { b in a.elementsEqual(b) } }
        guard same else {
            throw TureenError(.busy, "the blob key this writer sealed under was rolled back with the transaction that made it; write the blob again")
        }
    }

    static func load(_ c: Connection) throws -> SecretKey {
        let s = try c.cached("SELECT key FROM tureen_blob_key WHERE id = 1")
        defer { s.reset() }
        guard try s.step() else { throw TureenError(.corrupt, "the store's blob key is missing") }
        let bytes = s.blobBytes(0)
        guard bytes.count == AESGCM.keySize else { throw TureenError(.corrupt, "the store's blob key is damaged") }
        return SecretKey(count: bytes.count) { $0.copyMemory(from: bytes) }
    }
}
