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

    /// The size of the blob sealed under the key `keyId`.
    func sealedLength(_ ref: BlobRef, keyId: String) -> Int64 {
        Int64(BlobStream.sealedCount(plaintextCount: Int(ref.length), keyId: keyId))
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
    func downloadLimit(_ ref: BlobRef) -> Int64 {
        keys.all.map { sealedLength(ref, keyId: $0.id) }.max() ?? 0
    }
}

/// A stored blob sealed as it is read, for an upload body: a chunk of
/// plaintext and its sealed form in memory at a time, whatever the blob's
/// size. Read from the first byte to the last; reading from 0 again (a
/// retried request) seals afresh, under a new salt but to the same length.
final class SealedBlob: UploadBytes {
    let reader: BlobReader
    let keys: EnvelopeKeys
    let length: Int64
    private var sealer: BlobSealer
    /// Sealed bytes made but not yet read, and the offset of their first.
    private var out: [UInt8] = []
    private var outStart: Int64 = 0
    private var plainAt: Int64 = 0
    private var finished = false
    private var hasher: SHA256
    /// The SHA-256 of the sealed bytes, once the last was read: what a
    /// server that hashes uploads should say it stored.
    private(set) var sealedDigest: String?

    init(_ reader: BlobReader, keys: EnvelopeKeys) throws {
        self.reader = reader
        self.keys = keys
        length = Int64(BlobStream.sealedCount(plaintextCount: Int(reader.length), keyId: keys.sealing.id))
        sealer = try BlobSealer(keys: keys)
        hasher = try SHA256()
    }

    func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        if offset == 0 && (outStart > 0 || plainAt > 0 || finished) { try restart() }
        guard offset == outStart else {
            throw TureenError(.internal, "a sealed blob is read in order (asked for byte \(offset), at \(outStart))")
        }
        while out.isEmpty && !finished { try seal() }
        let n = min(out.count, buffer.count)
        out.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
        hasher.update(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buffer)[0..<n]))
        out.removeFirst(n)
        outStart += Int64(n)
        if out.isEmpty && finished && sealedDigest == nil {
            guard outStart == length else {
                throw TureenError(.internal, "blob \(reader.ref.digest) sealed to \(outStart) bytes where \(length) were announced")
            }
            sealedDigest = Hex.string(try hasher.finish())
        }
        return n
    }

    /// Seals the next piece of plaintext, or the last one.
    private func seal() throws {
        var piece = [UInt8](repeating: 0, count: BlobStream.defaultChunkSize)
        let n = try piece.withUnsafeMutableBytes { try reader.read(at: plainAt, into: $0) }
        if n == 0 {
            guard plainAt == reader.length else { throw TureenError(.internal, "blob \(reader.ref.digest) ended before its length") }
            out += try sealer.finish().bytes
            finished = true
        } else {
            plainAt += Int64(n)
            out += try piece[0..<n].withUnsafeBytes { try sealer.update($0) }
        }
    }

    private func restart() throws {
        sealer = try BlobSealer(keys: keys)
        hasher = try SHA256()
        out = []
        outStart = 0
        plainAt = 0
        finished = false
        sealedDigest = nil
    }
}
