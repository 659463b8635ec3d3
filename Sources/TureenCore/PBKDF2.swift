/// PBKDF2-HMAC-SHA1, the key derivation SQLCipher 3 applies to a passphrase.
///
/// SQLCipher derives the key again for every connection it opens (a quarter
/// of a second at 256,000 rounds), and a store opens a reader connection per
/// concurrent reader. Deriving once here and handing SQLCipher the result as a
/// raw key with the file's salt gives the same key and the same file, for
/// one derivation per open. Written for this one use: SHA-1 is not used for
/// anything else, and nothing here is a general hash API.
package enum PBKDF2 {
    /// The derived key: PBKDF2 (RFC 8018) with HMAC-SHA1 as the PRF.
    package static func sha1(password: [UInt8], salt: [UInt8], iterations: Int, keyLength: Int) -> [UInt8] {
        var key = password.count > SHA1.blockSize ? SHA1.digest(SHA1.initial, prefixLength: 0, password) : password
        key += [UInt8](repeating: 0, count: SHA1.blockSize - key.count)
        let inner = SHA1.compress(SHA1.initial, bytes: key.map { $0 ^ 0x36 })
        let outer = SHA1.compress(SHA1.initial, bytes: key.map { $0 ^ 0x5c })
        var out: [UInt8] = []
        var block: UInt32 = 1
        while out.count < keyLength {
            let first = salt + [UInt8(block >> 24), UInt8(truncatingIfNeeded: block >> 16), UInt8(truncatingIfNeeded: block >> 8), UInt8(truncatingIfNeeded: block)]
            let innerDigest = SHA1.digest(inner, prefixLength: SHA1.blockSize, first)
            var u = SHA1.words(SHA1.digest(outer, prefixLength: SHA1.blockSize, innerDigest))
            var t = u
            SHA1.withSchedule { w in
                for _ in 1..<max(iterations, 1) {
                    // HMAC of a 20-byte message: one block after each pad's state.
                    u = SHA1.compressDigestBlock(inner, u, w)
                    u = SHA1.compressDigestBlock(outer, u, w)
                    t.0 ^= u.0; t.1 ^= u.1; t.2 ^= u.2; t.3 ^= u.3; t.4 ^= u.4
                }
            }
            out += SHA1.bytes(t)
            block += 1
        }
        return Array(out.prefix(keyLength))
    }
}

/// The SHA-1 compression function and padding, as PBKDF2 needs them.
enum SHA1 {
    typealias State = (UInt32, UInt32, UInt32, UInt32, UInt32)
    static let blockSize = 64
    static let initial: State = (0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0)

    /// The digest of `message` hashed after `prefixLength` bytes already
    /// compressed into `state` (whole blocks: the HMAC pads).
    static func digest(_ state: State, prefixLength: Int, _ message: [UInt8]) -> [UInt8] {
        var m = message
        let bits = UInt64(prefixLength + message.count) * 8
        m.append(0x80)
        while m.count % blockSize != blockSize - 8 { m.append(0) }
        for i in (0..<8).reversed() { m.append(UInt8(truncatingIfNeeded: bits >> (UInt64(i) * 8))) }
        var h = state
        var at = 0
        while at < m.count {
            h = compress(h, bytes: Array(m[at..<at + blockSize]))
            at += blockSize
        }
        return bytes(h)
    }

    static func compress(_ h: State, bytes block: [UInt8]) -> State {
        withSchedule { w in
            for i in 0..<16 {
                w[i] = UInt32(block[4 * i]) << 24 | UInt32(block[4 * i + 1]) << 16 | UInt32(block[4 * i + 2]) << 8 | UInt32(block[4 * i + 3])
            }
            return rounds(h, w)
        }
    }

    /// One block holding a 20-byte digest after a 64-byte pad block: the
    /// padding and the length (84 bytes = 672 bits) are constant.
    @inline(__always)
    static func compressDigestBlock(_ h: State, _ d: State, _ w: UnsafeMutablePointer<UInt32>) -> State {
        w[0] = d.0; w[1] = d.1; w[2] = d.2; w[3] = d.3; w[4] = d.4
        w[5] = 0x8000_0000
        for i in 6..<15 { w[i] = 0 }
        w[15] = 672
        return rounds(h, w)
    }

    static func withSchedule<T>(_ body: (UnsafeMutablePointer<UInt32>) -> T) -> T {
        let w = UnsafeMutablePointer<UInt32>.allocate(capacity: 80)
        defer { w.deallocate() }
        return body(w)
    }

    /// The 80 rounds over the message words w[0..<16] (w[16..<80] is scratch).
    @inline(__always)
    static func rounds(_ h: State, _ w: UnsafeMutablePointer<UInt32>) -> State {
        for i in 16..<80 { w[i] = rotl(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1) }
        var (a, b, c, d, e) = h
        for i in 0..<80 {
            let f: UInt32, k: UInt32
            switch i {
            case 0..<20: f = (b & c) | (~b & d); k = 0x5A82_7999
            case 20..<40: f = b ^ c ^ d; k = 0x6ED9_EBA1
            case 40..<60: f = (b & c) | (b & d) | (c & d); k = 0x8F1B_BCDC
            default: f = b ^ c ^ d; k = 0xCA62_C1D6
            }
            let t = rotl(a, 5) &+ f &+ e &+ k &+ w[i]
            e = d; d = c; c = rotl(b, 30); b = a; a = t
        }
        return (h.0 &+ a, h.1 &+ b, h.2 &+ c, h.3 &+ d, h.4 &+ e)
    }

    @inline(__always)
    static func rotl(_ x: UInt32, _ n: UInt32) -> UInt32 { x << n | x >> (32 - n) }

    static func words(_ b: [UInt8]) -> State {
        func w(_ i: Int) -> UInt32 { UInt32(b[i]) << 24 | UInt32(b[i + 1]) << 16 | UInt32(b[i + 2]) << 8 | UInt32(b[i + 3]) }
        return (w(0), w(4), w(8), w(12), w(16))
    }

    static func bytes(_ h: State) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(20)
        for v in [h.0, h.1, h.2, h.3, h.4] {
            out += [UInt8(v >> 24), UInt8(truncatingIfNeeded: v >> 16), UInt8(truncatingIfNeeded: v >> 8), UInt8(truncatingIfNeeded: v)]
        }
        return out
    }
}
