import Glibc
import XCTest
@testable import TureenStore
@testable import TureenCore

final class KeyDerivationTests: XCTestCase {
    private func derivedHex(_ o: StoreOptions) -> String? {
        if case .derived(let h) = o.keying { return h }
        return nil
    }

    func testOnlyPassphrasesAreDerived() throws {
        let raw = try StoreOptions.parseOpen(#"{"raw_key":"\#(String(repeating: "cd", count: 32))"}"#)
        XCTAssertEqual(raw.derivingKey(for: "/nonexistent/x.db", api: try SQLCipherLibrary.api()).keying, raw.keying)
        let plain = try StoreOptions.parseOpen(#"{"unencrypted":true}"#)
        XCTAssertEqual(plain.derivingKey(for: "/nonexistent/x.db", api: try SQLCipherLibrary.api()).keying, .unencrypted)
    }

    func testNewFileGetsAFreshSaltAndNoSecondKDF() throws {
        let o = try StoreOptions.parseOpen(#"{"key":"p","kdf_iter":10}"#)
        let a = o.derivingKey(for: "/nonexistent/x.db", api: try SQLCipherLibrary.api()), b = o.derivingKey(for: "/nonexistent/x.db", api: try SQLCipherLibrary.api())
        let ha = try XCTUnwrap(derivedHex(a)), hb = try XCTUnwrap(derivedHex(b))
        XCTAssertEqual(ha.count, 96)  // 32-byte key + 16-byte salt, in hex
        XCTAssertNotEqual(ha.suffix(32), hb.suffix(32), "two new stores share a salt")
        XCTAssertNil(a.effectiveKdfIter)  // SQLCipher must not stretch the derived key again
        XCTAssertEqual(a.keyBytes, Array("x'\(ha)'".utf8))
    }

    /// An existing file's salt, with the default rounds: the key is the one
    /// the hand-written PBKDF2 derived before libcrypto's replaced it, so
    /// stores keyed by a passphrase before then still open.
    func testAnExistingFileKeepsItsKey() throws {
        let dir = makeTestDirectory()
        defer { removeTestDirectory(dir) }
        let path = dir + "/salted.db"
        let salt: [UInt8] = (0..<16).map { UInt8(truncatingIfNeeded: $0 * 17 + 3) }
        let file = try XCTUnwrap(fopen(path, "wb"))
        let page = salt + [UInt8](repeating: 0, count: 4096 - salt.count)
        XCTAssertEqual(page.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }, page.count)
        fclose(file)
        let o = try StoreOptions.parseOpen(#"{"key":"correct horse battery staple"}"#)
        XCTAssertEqual(derivedHex(o.derivingKey(for: path, api: try SQLCipherLibrary.api())),
                       "b056710d5554780f98b3143d51104ee9cfab7003df6de6affacd1c958ee03f25" + Hex.string(salt))
    }
}
