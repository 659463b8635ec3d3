/// PBKDF2-HMAC-SHA1 from libcrypto, the key derivation SQLCipher 3 applies
/// to a passphrase.
///
/// SQLCipher derives the key again for every connection it opens (a quarter
/// of a second at 256,000 rounds), and a store opens a reader connection per
/// concurrent reader. Deriving once here and handing SQLCipher the result as a
/// raw key with the file's salt gives the same key and the same file, for
/// one derivation per open.
package enum PBKDF2 {
    /// The derived key: PBKDF2 (RFC 8018) with HMAC-SHA1 as the PRF. Fewer
    /// than one iteration counts as one, as SQLCipher never asks for none.
    package static func sha1(password: [UInt8], salt: [UInt8], iterations: Int, keyLength: Int) throws -> [UInt8] {
        let api = try LibCrypto.api()
        guard let passwordLength = Int32(exactly: password.count), let saltLength = Int32(exactly: salt.count),
              let rounds = Int32(exactly: max(iterations, 1)), let length = Int32(exactly: keyLength), length > 0 else {
            throw TureenError(.internal, "PBKDF2 was asked for sizes libcrypto cannot take")
        }
        var key = [UInt8](repeating: 0, count: keyLength)
        let ok = password.withUnsafeBytes { p in
            salt.withUnsafeBufferPointer { s in
                key.withUnsafeMutableBufferPointer { k in
                    api.pbkdf2(p.baseAddress?.assumingMemoryBound(to: CChar.self), passwordLength, s.baseAddress, saltLength,
                               rounds, api.sha1, length, k.baseAddress)
                }
            }
        }
        guard ok == 1 else { throw TureenError(.internal, "OpenSSL's PBKDF2 failed") }
        return key
    }
}
