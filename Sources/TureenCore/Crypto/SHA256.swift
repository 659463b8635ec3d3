/// SHA-256 from libcrypto, fed in pieces: blobs are named by the digest of
/// their bytes and are hashed while they stream, never held whole.
/// libcrypto runs it on the CPU's SHA extensions where it has them.
///
/// A class, as it owns libcrypto's context: a copy would share the state.
package final class SHA256 {
    package static let size = 32
    private let api: LibCryptoAPI
    private let context: OpaquePointer
    /// Set when libcrypto refused a piece: `finish` then throws rather than
    /// give the digest of some of the bytes.
    private var failed = false
    private var finished = false

    package init() throws {
        api = try LibCrypto.api()
        guard let c = api.digestContextNew() else { throw TureenError(.internal, "OpenSSL could not allocate a digest context") }
        guard api.digestInit(c, api.sha256, nil) == 1 else {
            api.digestContextFree(c)
            throw TureenError(.internal, "OpenSSL's SHA-256 failed to start")
        }
        context = c
    }

    deinit { api.digestContextFree(context) }

    package func update(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0, !failed, !finished else { return }
        failed = api.digestUpdate(context, bytes.baseAddress, bytes.count) != 1
    }

    package func update(_ bytes: [UInt8]) { bytes.withUnsafeBytes { update($0) } }

    /// The 32-byte digest; the hasher is spent afterwards.
    package func finish() throws -> [UInt8] {
        guard !finished else { throw TureenError(.internal, "a SHA-256 hasher was finished twice") }
        finished = true
        var out = [UInt8](repeating: 0, count: SHA256.size)
        var length: UInt32 = 0
        let ok = !failed && out.withUnsafeMutableBufferPointer { api.digestFinal(context, $0.baseAddress, &length) } == 1
        guard ok, length == UInt32(SHA256.size) else { throw TureenError(.internal, "OpenSSL's SHA-256 failed") }
        return out
    }

    package static func digest(_ bytes: UnsafeRawBufferPointer) throws -> [UInt8] {
        let s = try SHA256()
        s.update(bytes)
        return try s.finish()
    }

    package static func digest(_ bytes: [UInt8]) throws -> [UInt8] { try bytes.withUnsafeBytes { try digest($0) } }
}
