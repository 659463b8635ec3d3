import TureenStore
import TureenCore

/// A stored blob sealed as it is read, for an upload body: a chunk of
/// plaintext and its sealed form in memory at a time, whatever the blob's
/// size. Read from the first byte to the last; reading from 0 again (a
/// retried request) seals afresh, under a new salt but to the same length.
final class SealedUpload: UploadBytes {
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
        guard let sealed = BlobSealing.sealedLength(reader.length, keyId: keys.sealing.id) else {
            throw TureenError(.corrupt, "blob \(reader.ref.digest) is stored with length \(reader.length), more than any blob holds")
        }
        length = sealed
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
