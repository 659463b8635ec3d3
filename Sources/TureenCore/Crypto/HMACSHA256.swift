/// HMAC-SHA256 from libcrypto, used to derive one key from another (a key
/// per blob from the target's key), so that the result goes straight into
/// a SecretKey.
package enum HMACSHA256 {
    package static let size = 32

    package static func key(from key: SecretKey, message: [UInt8]) throws -> SecretKey {
        let api = try LibCrypto.api()
        return try SecretKey(count: size) { out in
            var length: UInt32 = 0
            let done = key.withBytes { k in
                message.withUnsafeBufferPointer { m in
                    api.hmac(api.sha256, k.baseAddress, Int32(k.count), m.baseAddress, m.count,
                             out.baseAddress?.assumingMemoryBound(to: UInt8.self), &length)
                }
            }
            guard done != nil, length == UInt32(size) else { throw TureenError(.internal, "OpenSSL's HMAC-SHA256 failed") }
        }
    }
}
