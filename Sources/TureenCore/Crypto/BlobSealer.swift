/// Encrypts a blob a chunk at a time in BlobStream's format, under the
/// first of the target's keys: feed it the plaintext in pieces of any size,
/// send what each call returns, then what `finish` returns.
package struct BlobSealer {
    private let chunkSize: Int
    private let key: SecretKey
    private let header: [UInt8]
    private var headerSent = false
    /// Plaintext not yet sealed: a chunk is sealed only once more follows,
    /// as the last one is sealed differently.
    private var pending: [UInt8] = []
    private var index: UInt64 = 0
    private let digest: SHA256
    private var finished = false
    package private(set) var plaintextCount = 0

    package init(keys: EnvelopeKeys, chunkSize: Int = BlobStream.defaultChunkSize) throws {
        guard (1...BlobStream.maxChunkSize).contains(chunkSize) else {
            throw TureenError.invalid("a blob chunk must be 1 to \(BlobStream.maxChunkSize) bytes")
        }
        let salt = try SecureRandom.bytes(BlobStream.saltSize)
        self.chunkSize = chunkSize
        digest = try SHA256()
        key = try BlobStream.blobKey(keys.sealing.secret, salt: salt)
        header = BlobStream.header(chunkSize: chunkSize, keyId: keys.sealing.id, salt: salt)
    }

    package mutating func update(_ bytes: [UInt8]) throws -> [UInt8] {
        try bytes.withUnsafeBytes { try update($0) }
    }

    /// The sealed bytes that `bytes` completes (the header first).
    package mutating func update(_ bytes: UnsafeRawBufferPointer) throws -> [UInt8] {
        guard !finished else { throw TureenError.misuse("a blob sealer was fed after it finished") }
        digest.update(bytes)
        plaintextCount += bytes.count
        pending.append(contentsOf: bytes)
        var out = takeHeader()
        var start = 0
        while pending.count - start > chunkSize {
            out += try sealChunk(pending[start..<start + chunkSize], last: false)
            start += chunkSize
        }
        if start > 0 { pending.removeFirst(start) }
        return out
    }

    /// The last sealed bytes, and the plaintext's SHA-256 (to keep in the
    /// encrypted record, where the server cannot read it).
    package mutating func finish() throws -> (bytes: [UInt8], plaintextDigest: [UInt8]) {
        guard !finished else { throw TureenError.misuse("a blob sealer was finished twice") }
        finished = true
        let out = takeHeader() + (try sealChunk(pending[...], last: true))
        pending = []
        return (out, try digest.finish())
    }

    private mutating func takeHeader() -> [UInt8] {
        if headerSent { return [] }
        headerSent = true
        return header
    }

    private mutating func sealChunk(_ chunk: ArraySlice<UInt8>, last: Bool) throws -> [UInt8] {
        let sealed = try chunk.withUnsafeBytes {
            try AESGCM.seal($0, key: key, nonce: BlobStream.nonce(index), aad: BlobStream.associatedData(header: header, last: last))
        }
        index += 1
        return sealed
    }
}
