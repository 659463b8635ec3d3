/// Bytes from OpenSSL's CSPRNG (RAND_bytes): nonces and salts.
package enum SecureRandom {
    package static func bytes(_ count: Int) throws -> [UInt8] {
        let api = try LibCrypto.api()
        var out = [UInt8](repeating: 0, count: count)
        let ok = out.withUnsafeMutableBufferPointer { api.randomBytes($0.baseAddress, Int32(count)) }
        guard ok == 1 else { throw TureenError(.internal, "OpenSSL's random generator failed") }
        return out
    }
}
