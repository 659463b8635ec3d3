/// AES-256-GCM over the chunks of one stream in BlobStream's format,
/// sealing and opening in buffers the caller owns: the store's blob files
/// move hundreds of megabytes through it, so it keeps one libcrypto context
/// (the key schedule made once) and allocates nothing per chunk, where
/// AESGCM makes a context and an array for every message.
package final class ChunkCipher {
    private let api: LibCryptoAPI
    private let context: LibCryptoAPI.Context
    /// BlobStream's header: the associated data of every chunk.
    package let header: [UInt8]
    package let chunkSize: Int

    /// A cipher for a new stream: a random salt, so a key of its own.
    package convenience init(sealingUnder key: SecretKey, keyId: String, chunkSize: Int) throws {
        let salt = try SecureRandom.bytes(BlobStream.saltSize)
        try self.init(header: BlobStream.header(chunkSize: chunkSize, keyId: keyId, salt: salt), key: key)
    }

    /// The cipher of a stream whose header is `header`; nil when it is not
    /// BlobStream's header with this key id and chunk size.
    package convenience init?(opening header: [UInt8], under key: SecretKey, keyId: String, chunkSize: Int) throws {
        let expected = BlobStream.header(chunkSize: chunkSize, keyId: keyId, salt: [])
        guard header.count == ChunkCipher.headerSize(keyId: keyId), Array(header.prefix(expected.count)) == expected else { return nil }
        try self.init(header: header, key: key)
    }

    private init(header: [UInt8], key: SecretKey) throws {
        api = try LibCrypto.api()
        let salt = Array(header.suffix(BlobStream.saltSize))
        let streamKey = try BlobStream.blobKey(key, salt: salt)
        guard let ctx = api.contextNew() else { throw TureenError(.internal, "out of memory for a cipher context") }
        context = ctx
        self.header = header
        chunkSize = header[4..<8].reduce(0) { $0 << 8 | Int($1) }
        // The key is set once for both directions; each chunk then sets
        // only its nonce.
        guard api.encryptInit(ctx, api.aes256GCM, nil, nil, nil) == 1,
              api.contextControl(ctx, LibCryptoAPI.setIVLength, Int32(AESGCM.nonceSize), nil) == 1
        else { throw ChunkCipher.failure("setup") }
        let ok = streamKey.withBytes { api.encryptInit(ctx, nil, nil, $0.baseAddress?.assumingMemoryBound(to: UInt8.self), nil) }
        guard ok == 1 else { throw ChunkCipher.failure("setup") }
    }

    // Freeing the context also wipes the key schedule it holds.
    deinit { api.contextFree(context) }

    package static func headerSize(keyId: String) -> Int {
        BlobStream.fixedHeaderSize + keyId.utf8.count + BlobStream.saltSize
    }

    /// Seals `plain` (at most a chunk) as chunk `index` into `out`, which
    /// has room for it and its tag; returns how many bytes it wrote.
    package func seal(_ plain: UnsafeRawBufferPointer, index: UInt64, last: Bool, into out: UnsafeMutableRawPointer) throws -> Int {
        let n = plain.count
        let bytes = out.assumingMemoryBound(to: UInt8.self)
        try start(api.encryptInit, api.encryptUpdate, index: index, last: last)
        var len: Int32 = 0
        if n > 0 {
            guard api.encryptUpdate(context, bytes, &len, plain.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(n)) == 1,
                  Int(len) == n
            else { throw ChunkCipher.failure("encryption") }
        }
        guard api.encryptFinal(context, bytes + n, &len) == 1, len == 0,
              api.contextControl(context, LibCryptoAPI.getTag, Int32(AESGCM.tagSize), UnsafeMutableRawPointer(bytes + n)) == 1
        else { throw ChunkCipher.failure("encryption") }
        return n + AESGCM.tagSize
    }

    /// Opens chunk `index`, `sealed` (its ciphertext and tag), into `out`
    /// (room for the plaintext); false when it does not authenticate.
    package func open(_ sealed: UnsafeRawBufferPointer, index: UInt64, last: Bool, into out: UnsafeMutableRawPointer) throws -> Bool {
        guard sealed.count >= AESGCM.tagSize, let input = sealed.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return false }
        let n = sealed.count - AESGCM.tagSize
        let bytes = out.assumingMemoryBound(to: UInt8.self)
        try start(api.decryptInit, api.decryptUpdate, index: index, last: last)
        var len: Int32 = 0
        if n > 0 {
            guard api.decryptUpdate(context, bytes, &len, input, Int32(n)) == 1, Int(len) == n else { throw ChunkCipher.failure("decryption") }
        }
        guard api.contextControl(context, LibCryptoAPI.setTag, Int32(AESGCM.tagSize), UnsafeMutableRawPointer(mutating: input + n)) == 1
        else { throw ChunkCipher.failure("decryption") }
        return api.decryptFinal(context, bytes + n, &len) == 1
    }

    /// Sets chunk `index`'s nonce and feeds its associated data: the header
    /// and whether it is the last chunk.
    private func start(_ initFn: LibCryptoAPI.CipherInit, _ updateFn: LibCryptoAPI.CipherUpdate, index: UInt64, last: Bool) throws {
        var nonce = BlobStream.nonce(index)
        guard initFn(context, nil, nil, nil, &nonce) == 1 else { throw ChunkCipher.failure("setup") }
        var len: Int32 = 0
        var flag: UInt8 = last ? 1 : 0
        let ok = header.withUnsafeBufferPointer { updateFn(context, nil, &len, $0.baseAddress, Int32($0.count)) } == 1
            && updateFn(context, nil, &len, &flag, 1) == 1
        guard ok else { throw ChunkCipher.failure("associated data") }
    }

    private static func failure(_ step: String) -> TureenError {
        TureenError(.internal, "OpenSSL's AES-256-GCM failed (\(step))")
    }
}
