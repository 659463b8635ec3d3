import Glibc

/// The few OpenSSL libcrypto functions that end-to-end encryption, blob
/// hashing and passphrase key derivation use,
/// resolved at run time as SQLCipher is (TureenStore's SQLCipherLibrary):
/// the library links nothing at build time beyond the toolchain and libcurl,
/// and SQLCipher and libcurl have already brought libcrypto.so.3 into the
/// process. Resolving through our own handle binds every call to OpenSSL 3
/// whatever other libcrypto a host has loaded.
package struct LibCryptoAPI: @unchecked Sendable {
    // Unchecked: immutable C function pointers and libcrypto's immutable
    // cipher and digest objects, resolved once; OpenSSL 3 is threadsafe
    // without setup.
    typealias Context = OpaquePointer
    typealias CipherInit = @convention(c) (Context?, OpaquePointer?, OpaquePointer?, UnsafePointer<UInt8>?, UnsafePointer<UInt8>?) -> Int32
    typealias CipherUpdate = @convention(c) (Context?, UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<Int32>?, UnsafePointer<UInt8>?, Int32) -> Int32
    typealias CipherFinal = @convention(c) (Context?, UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<Int32>?) -> Int32

    let contextNew: @convention(c) () -> Context?
    let contextFree: @convention(c) (Context?) -> Void
    let contextControl: @convention(c) (Context?, Int32, Int32, UnsafeMutableRawPointer?) -> Int32
    let encryptInit: CipherInit
    let encryptUpdate: CipherUpdate
    let encryptFinal: CipherFinal
    let decryptInit: CipherInit
    let decryptUpdate: CipherUpdate
    let decryptFinal: CipherFinal
    let randomBytes: @convention(c) (UnsafeMutablePointer<UInt8>?, Int32) -> Int32
    let hmac: @convention(c) (OpaquePointer?, UnsafeRawPointer?, Int32, UnsafePointer<UInt8>?, Int,
                              UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt32>?) -> UnsafeMutablePointer<UInt8>?
    /// AES-256-GCM, fetched once: EVP_aes_256_gcm() would be looked up in
    /// the provider again at every EVP_EncryptInit_ex.
    let aes256GCM: OpaquePointer
    let sha256: OpaquePointer
    // Digests and key derivation (SHA256.swift, PBKDF2.swift): libcrypto
    // runs them on the CPU's SHA extensions where it has them.
    let digestContextNew: @convention(c) () -> OpaquePointer?
    let digestContextFree: @convention(c) (OpaquePointer?) -> Void
    let digestInit: @convention(c) (OpaquePointer?, OpaquePointer?, OpaquePointer?) -> Int32
    let digestUpdate: @convention(c) (OpaquePointer?, UnsafeRawPointer?, Int) -> Int32
    let digestFinal: @convention(c) (OpaquePointer?, UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt32>?) -> Int32
    let pbkdf2: @convention(c) (UnsafePointer<CChar>?, Int32, UnsafePointer<UInt8>?, Int32, Int32, OpaquePointer?, Int32,
                                UnsafeMutablePointer<UInt8>?) -> Int32
    let sha1: OpaquePointer

    // EVP_CTRL_AEAD_SET_IVLEN, _GET_TAG and _SET_TAG in openssl/evp.h.
    static let setIVLength: Int32 = 0x9
    static let getTag: Int32 = 0x10
    static let setTag: Int32 = 0x11

    fileprivate init(handle: UnsafeMutableRawPointer) throws {
        func sym<T>(_ name: String) throws -> T {
            guard let p = dlsym(handle, name) else {
                throw TureenError(.internal, "\(LibCrypto.soname) lacks \(name): it is not a usable OpenSSL 3 build")
            }
            return unsafeBitCast(p, to: T.self)
        }
        contextNew = try sym("EVP_CIPHER_CTX_new")
        contextFree = try sym("EVP_CIPHER_CTX_free")
        contextControl = try sym("EVP_CIPHER_CTX_ctrl")
        encryptInit = try sym("EVP_EncryptInit_ex")
        encryptUpdate = try sym("EVP_EncryptUpdate")
        encryptFinal = try sym("EVP_EncryptFinal_ex")
        decryptInit = try sym("EVP_DecryptInit_ex")
        decryptUpdate = try sym("EVP_DecryptUpdate")
        decryptFinal = try sym("EVP_DecryptFinal_ex")
        randomBytes = try sym("RAND_bytes")
        hmac = try sym("HMAC")
        let fetch: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, UnsafePointer<CChar>?) -> OpaquePointer? =
            try sym("EVP_CIPHER_fetch")
        guard let gcm = fetch(nil, "AES-256-GCM", nil) else {
            throw TureenError(.internal, "\(LibCrypto.soname) offers no AES-256-GCM")
        }
        aes256GCM = gcm
        let sha256: @convention(c) () -> OpaquePointer? = try sym("EVP_sha256")
        guard let md = sha256() else { throw TureenError(.internal, "\(LibCrypto.soname) offers no SHA-256") }
        self.sha256 = md
        digestContextNew = try sym("EVP_MD_CTX_new")
        digestContextFree = try sym("EVP_MD_CTX_free")
        digestInit = try sym("EVP_DigestInit_ex")
        digestUpdate = try sym("EVP_DigestUpdate")
        digestFinal = try sym("EVP_DigestFinal_ex")
        pbkdf2 = try sym("PKCS5_PBKDF2_HMAC")
        let sha1: @convention(c) () -> OpaquePointer? = try sym("EVP_sha1")
        guard let md1 = sha1() else { throw TureenError(.internal, "\(LibCrypto.soname) offers no SHA-1") }
        self.sha1 = md1
    }
}

package enum LibCrypto {
    static let soname = "libcrypto.so.3"

    /// Loaded once per process, on first use; the library is never unloaded.
    private static let loaded: Result<LibCryptoAPI, TureenError> = load()

    package static func api() throws -> LibCryptoAPI { try loaded.get() }

    private static func load() -> Result<LibCryptoAPI, TureenError> {
        guard let handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL) else {
            let why = dlerror().map { String(cString: $0) } ?? "unknown reason"
            return .failure(TureenError(.internal, "hashing and encryption need OpenSSL's \(soname) (Debian's libssl3), which cannot be loaded: \(why)"))
        }
        return Result { try LibCryptoAPI(handle: handle) }.mapError { $0 as? TureenError ?? TureenError(.internal, "\($0)") }
    }
}
