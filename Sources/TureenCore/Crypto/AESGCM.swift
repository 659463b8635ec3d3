/// AES-256-GCM through libcrypto's EVP interface. A sealed message is the
/// ciphertext (as long as the plaintext) followed by the 16-byte tag.
package enum AESGCM {
    package static let keySize = 32
    package static let nonceSize = 12
    package static let tagSize = 16

    package static func seal(_ plaintext: UnsafeRawBufferPointer, key: SecretKey, nonce: [UInt8], aad: [UInt8]) throws -> [UInt8] {
        let api = try LibCrypto.api()
        try check(key: key, nonce: nonce, length: plaintext.count)
        return try withContext(api) { ctx in
            try initialise(api.encryptInit, api, ctx, key: key, nonce: nonce)
            try update(api.encryptUpdate, ctx, aad: aad)
            let n = plaintext.count
            return try [UInt8](unsafeUninitializedCapacity: n + tagSize) { out, written in
                var len: Int32 = 0
                if n > 0 {
                    guard api.encryptUpdate(ctx, out.baseAddress, &len, plaintext.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(n)) == 1,
                          Int(len) == n
                    else { throw failure("encryption") }
                }
                var tail: Int32 = 0
                guard api.encryptFinal(ctx, out.baseAddress.map { $0 + n }, &tail) == 1, tail == 0,
                      api.contextControl(ctx, LibCryptoAPI.getTag, Int32(tagSize), out.baseAddress.map { UnsafeMutableRawPointer($0 + n) }) == 1
                else { throw failure("encryption") }
                written = n + tagSize
            }
        }
    }

    /// The plaintext, or nil when `sealed` does not authenticate under this
    /// key, nonce and associated data.
    package static func open(_ sealed: UnsafeRawBufferPointer, key: SecretKey, nonce: [UInt8], aad: [UInt8]) throws -> [UInt8]? {
        let api = try LibCrypto.api()
        try check(key: key, nonce: nonce, length: sealed.count)
        guard sealed.count >= tagSize else { return nil }
        let n = sealed.count - tagSize
        let input = UnsafeBufferPointer(start: sealed.baseAddress?.assumingMemoryBound(to: UInt8.self), count: sealed.count)
        return try withContext(api) { ctx in
            try initialise(api.decryptInit, api, ctx, key: key, nonce: nonce)
            try update(api.decryptUpdate, ctx, aad: aad)
            var authentic = false
            let plain = try [UInt8](unsafeUninitializedCapacity: max(n, 1)) { out, written in
                var len: Int32 = 0
                if n > 0 {
                    guard api.decryptUpdate(ctx, out.baseAddress, &len, input.baseAddress, Int32(n)) == 1, Int(len) == n
                    else { throw failure("decryption") }
                }
                var tag = Array(input[n...])
                guard api.contextControl(ctx, LibCryptoAPI.setTag, Int32(tagSize), &tag) == 1 else { throw failure("decryption") }
                var tail: Int32 = 0
                authentic = api.decryptFinal(ctx, out.baseAddress.map { $0 + n }, &tail) == 1
                written = n
            }
            return authentic ? plain : nil
        }
    }

    private static func check(key: SecretKey, nonce: [UInt8], length: Int) throws {
        guard key.count == keySize, nonce.count == nonceSize else {
            throw TureenError(.internal, "AES-256-GCM takes a \(keySize)-byte key and a \(nonceSize)-byte nonce")
        }
        guard length <= Int(Int32.max) - tagSize else {
            throw TureenError(.invalid, "a message of \(length) bytes is too long to encrypt in one piece")
        }
    }

    private static func withContext<T>(_ api: LibCryptoAPI, _ body: (LibCryptoAPI.Context) throws -> T) throws -> T {
        guard let ctx = api.contextNew() else { throw TureenError(.internal, "out of memory for a cipher context") }
        // Freeing the context also wipes the key schedule it holds.
        defer { api.contextFree(ctx) }
        return try body(ctx)
    }

    private static func initialise(_ initFn: LibCryptoAPI.CipherInit, _ api: LibCryptoAPI, _ ctx: LibCryptoAPI.Context,
                                   key: SecretKey, nonce: [UInt8]) throws {
        guard initFn(ctx, api.aes256GCM, nil, nil, nil) == 1,
              api.contextControl(ctx, LibCryptoAPI.setIVLength, Int32(nonceSize), nil) == 1
        else { throw failure("setup") }
        let ok = key.withBytes { k in
            nonce.withUnsafeBufferPointer { iv in
                initFn(ctx, nil, nil, k.baseAddress?.assumingMemoryBound(to: UInt8.self), iv.baseAddress)
            }
        }
        guard ok == 1 else { throw failure("setup") }
    }

    private static func update(_ updateFn: LibCryptoAPI.CipherUpdate, _ ctx: LibCryptoAPI.Context, aad: [UInt8]) throws {
        guard !aad.isEmpty else { return }
        var len: Int32 = 0
        let ok = aad.withUnsafeBufferPointer { updateFn(ctx, nil, &len, $0.baseAddress, Int32($0.count)) }
        guard ok == 1 else { throw failure("associated data") }
    }

    private static func failure(_ step: String) -> TureenError {
        TureenError(.internal, "OpenSSL's AES-256-GCM failed (\(step))")
    }
}
