import TureenStore
import TureenCore

/// How blobs travel on a target with "encryption": sealed in BlobStream's
/// format under the first key, named on the server by BlobStream.serverName,
/// and sent as opaque bytes. The plaintext digest, length and content type
/// the entry refers to stay inside the sealed record. What the server still
/// learns: each blob's sealed size (so roughly its length) and which
/// records were written when it was uploaded.
struct BlobSealing {
    /// The content type every sealed blob is sent with, whatever it holds.
    static let contentType = "application/octet-stream"
    let keys: EnvelopeKeys

    /// The blob's server names, one per listed key in the keys' order: the
    /// first is where it is uploaded; a blob uploaded before a rotation is
    /// found under an older key's name, and opens with that key.
    func names(_ ref: BlobRef) throws -> [(hex: String, keyId: String)] {
        try keys.all.map { (try BlobStream.serverName(digest: ref.digest, key: $0.secret), $0.id) }
    }

    /// The longest blob a reference may give. A decrypted record's length
    /// is the server's to choose: bounded, a sealed size (plus the slack a
    /// download takes) stays far inside Int64.
    static let maxLength: Int64 = 1 << 62

    /// The size of a blob of `length` bytes sealed under the key `keyId`;
    /// nil when no blob is that long.
    static func sealedLength(_ length: Int64, keyId: String) -> Int64? {
        guard length >= 0, length <= maxLength else { return nil }
        return Int64(BlobStream.sealedCount(plaintextCount: Int(length), keyId: keyId))
    }

    /// The size of the blob sealed under the key `keyId`; nil when its
    /// reference gives a length no blob has (no server holds it).
    func sealedLength(_ ref: BlobRef, keyId: String) -> Int64? {
        BlobSealing.sealedLength(ref.length, keyId: keyId)
    }

    /// A blob the server has under none of its names. Records refer to a
    /// blob only once it is uploaded, so it was most likely sealed under a
    /// key no longer listed, as a record under such a key is TUREEN_E_KEY;
    /// like that record, the one referring to it fails alone.
    func notOnServer(_ ref: BlobRef) -> ServedBlobFault {
        ServedBlobFault(.key, "the server holds blob \(ref.digest) under none of the names the target's keys give it: it was sealed under a key not listed, or is missing")
    }

    /// The most a download of the blob may take: its sealed size under the
    /// longest key id listed. A server sending more is cut off there.
    /// A length no blob has fails the records referring to it, as
    /// TUREEN_E_CORRUPT.
    func downloadLimit(_ ref: BlobRef) throws -> Int64 {
        try keys.all.map {
            guard let n = sealedLength(ref, keyId: $0.id) else {
                throw ServedBlobFault(.corrupt, "a record refers to blob \(ref.digest) with length \(ref.length), more than any blob holds (\(BlobSealing.maxLength) bytes at most); it was not fetched")
            }
            return n
        }.max() ?? 0
    }
}
