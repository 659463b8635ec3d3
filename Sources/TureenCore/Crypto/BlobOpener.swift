/// Decrypts and checks a blob in BlobStream's format, a chunk at a time:
/// feed it what the server sent in pieces of any size, then `finish`. Each
/// call returns plaintext that has been authenticated chunk by chunk, but
/// only `finish` can tell a stream cut short at a chunk boundary, so
/// nothing may refer to the plaintext before it returns.
package struct BlobOpener {
    private let keys: EnvelopeKeys
    private var header: [UInt8]?
    private var chunkSize = 0
    private var key: SecretKey?
    /// Received bytes not yet opened: the header until it is whole, then a
    /// chunk is opened once more follows, as the last one opens differently.
    private var pending: [UInt8] = []
    private var index: UInt64 = 0
    /// Made with the key, where a failure can be thrown: `init` throws nothing.
    private var digest: SHA256?
    private var finished = false

    package init(keys: EnvelopeKeys) {
        self.keys = keys
    }

    package mutating func update(_ bytes: [UInt8]) throws -> [UInt8] {
        try bytes.withUnsafeBytes { try update($0) }
    }

    package mutating func update(_ bytes: UnsafeRawBufferPointer) throws -> [UInt8] {
        guard !finished else { throw TureenError.misuse("a blob opener was fed after it finished") }
        pending.append(contentsOf: bytes)
        var start = try readHeader()
        guard let key, let header else { return [] }
        var out: [UInt8] = []
        let sealedChunk = chunkSize + AESGCM.tagSize
        while pending.count - start > sealedChunk {
            out += try openChunk(pending[start..<start + sealedChunk], key: key, header: header, last: false)
            start += sealedChunk
        }
        if start > 0 { pending.removeFirst(start) }
        return out
    }

    /// The last plaintext, and the whole plaintext's SHA-256 (to compare
    /// with the digest the encrypted record holds).
    package mutating func finish() throws -> (bytes: [UInt8], plaintextDigest: [UInt8]) {
        guard !finished else { throw TureenError.misuse("a blob opener was finished twice") }
        finished = true
        guard let key, let header, let digest else { throw TureenError(.corrupt, "the encrypted blob is truncated: its header is incomplete") }
        let out = try openChunk(pending[...], key: key, header: header, last: true)
        pending = []
        return (out, try digest.finish())
    }

    /// Parses the header once `pending` holds it; the offset of what follows it.
    private mutating func readHeader() throws -> Int {
        if header != nil { return 0 }
        guard pending.count >= BlobStream.fixedHeaderSize else { return 0 }
        guard Array(pending[0..<4]) == BlobStream.magic else {
            throw TureenError(.corrupt, "the blob is not encrypted in a format this version reads")
        }
        let size = pending[4..<8].reduce(0) { $0 << 8 | Int($1) }
        guard (1...BlobStream.maxChunkSize).contains(size) else {
            throw TureenError(.corrupt, "the encrypted blob's header gives an impossible chunk size")
        }
        let end = BlobStream.fixedHeaderSize + Int(pending[8]) + BlobStream.saltSize
        guard pending.count >= end else { return 0 }
        let kid = String(decoding: pending[BlobStream.fixedHeaderSize..<end - BlobStream.saltSize], as: UTF8.self)
        guard let k = keys.key(id: kid) else {
            let named = EnvelopeKeys.isValidId(kid) ? "\"\(kid)\"" : "an invalid key id"
            throw TureenError(.key, "the blob is sealed under \(named), which is not among the target's keys")
        }
        key = try BlobStream.blobKey(k.secret, salt: Array(pending[end - BlobStream.saltSize..<end]))
        digest = try SHA256()
        header = Array(pending[0..<end])
        chunkSize = size
        return end
    }

    private mutating func openChunk(_ sealed: ArraySlice<UInt8>, key: SecretKey, header: [UInt8], last: Bool) throws -> [UInt8] {
        let opened = try sealed.withUnsafeBytes {
            try AESGCM.open($0, key: key, nonce: BlobStream.nonce(index), aad: BlobStream.associatedData(header: header, last: last))
        }
        guard let plain = opened else {
            throw TureenError(.corrupt, "the encrypted blob does not decrypt at chunk \(index): it was altered, reordered or cut short")
        }
        index += 1
        digest?.update(plain)
        return plain
    }
}
