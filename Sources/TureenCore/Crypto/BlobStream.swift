/// The format of an encrypted blob, written by BlobSealer and read by
/// BlobOpener, so that a blob is encrypted and checked a chunk at a time,
/// never whole in memory:
///
///     header: "TRB" 0x01 | chunk size (4 bytes, big-endian) | key id length (1 byte) | key id | salt (32 random bytes)
///     chunks: AES-256-GCM ciphertext of `chunk size` plaintext bytes, then its 16-byte tag; the
///             last chunk holds the rest (0 to `chunk size` bytes, so an empty blob is one tag)
///
/// Each blob has a key of its own, HMAC-SHA256(the target's key, "tureen blob v1" | salt),
/// so chunk nonces can simply count: 4 zero bytes | chunk index (8 bytes, big-endian).
/// Each chunk's associated data is the header and a byte that is 1 on the last chunk,
/// 0 before: a chunk moved, dropped or altered, a stream cut at a chunk boundary,
/// or anything appended does not open.
package enum BlobStream {
    package static let defaultChunkSize = 64 * 1024
    /// The largest chunk an opener accepts, bounding what a hostile
    /// server can make it buffer.
    package static let maxChunkSize = 1 << 20
    static let magic: [UInt8] = [0x54, 0x52, 0x42, 0x01]
    static let saltSize = 32
    /// Magic, chunk size and key id length: enough to know the header's size.
    static let fixedHeaderSize = 9

    /// The size of the sealed form of `plaintextCount` bytes (a request's
    /// Content-Length before the first byte is sealed).
    package static func sealedCount(plaintextCount: Int, keyId: String, chunkSize: Int = defaultChunkSize) -> Int {
        let chunks = max(1, (plaintextCount + chunkSize - 1) / chunkSize)
        return fixedHeaderSize + keyId.utf8.count + saltSize + plaintextCount + chunks * AESGCM.tagSize
    }

    static func header(chunkSize: Int, keyId: String, salt: [UInt8]) -> [UInt8] {
        let n = UInt32(chunkSize)
        return magic + [UInt8(n >> 24), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF),
                        UInt8(keyId.utf8.count)] + Array(keyId.utf8) + salt
    }

    /// The name a blob goes by on an encrypted target's server (64 hex
    /// digits): HMAC-SHA256(the target's key, "tureen blob name v1" |
    /// digest). Every device holding the key finds the blob by it, and two
    /// records sharing a blob share its upload, but the server cannot tell
    /// it from the plaintext's digest, which would say which known file it
    /// holds. Its prefix differs from blobKey's, so a name is never a key.
    package static func serverName(digest: String, key: SecretKey) throws -> String {
        try HMACSHA256.key(from: key, message: Array("tureen blob name v1".utf8) + Array(digest.utf8)).withBytes { Hex.string($0) }
    }

    static func blobKey(_ key: SecretKey, salt: [UInt8]) throws -> SecretKey {
        try HMACSHA256.key(from: key, message: Array("tureen blob v1".utf8) + salt)
    }

    static func nonce(_ index: UInt64) -> [UInt8] {
        [0, 0, 0, 0] + (0..<8).map { UInt8(index >> (56 - 8 * UInt64($0)) & 0xFF) }
    }

    static func associatedData(header: [UInt8], last: Bool) -> [UInt8] {
        header + [last ? 1 : 0]
    }
}
