import XCTest
@testable import TureenStore
@testable import TureenCore

/// RFC 6070's PBKDF2-HMAC-SHA1 vectors, plus a password longer than a SHA-1
/// block (hashed first) checked against Python's hashlib.pbkdf2_hmac.
final class PBKDF2Tests: XCTestCase {
    private func hex(_ b: [UInt8]) -> String {
        b.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    private func derive(_ p: String, _ s: String, _ c: Int, _ len: Int) -> String {
        hex(PBKDF2.sha1(password: Array(p.utf8), salt: Array(s.utf8), iterations: c, keyLength: len))
    }

    func testRFC6070() {
        XCTAssertEqual(derive("password", "salt", 1, 20), "0c60c80f961f0e71f3a9b524af6012062fe037a6")
        XCTAssertEqual(derive("password", "salt", 2, 20), "ea6c014dc72d6f8ccd1ed92ace1d41f0d8de8957")
        XCTAssertEqual(derive("password", "salt", 4096, 20), "4b007901b765489abead49d926f721d065a429c1")
        XCTAssertEqual(derive("passwordPASSWORDpassword", "saltSALTsaltSALTsaltSALTsaltSALTsalt", 4096, 25),
                       "3d2eec4fe41c849b80c8d83662c0e44a8b291a964cf2f07038")
        XCTAssertEqual(derive("pass\0word", "sa\0lt", 4096, 16), "56fa6aa75548099dcc37d7f03425e0c3")
    }

    func testLongPasswordAndTwoBlocks() {
        let key = PBKDF2.sha1(password: Array(repeating: UInt8(ascii: "x"), count: 100), salt: Array(0..<16),
                              iterations: 1000, keyLength: 32)
        XCTAssertEqual(hex(key), "c11dad0df341d0fd009d6a96ca3d36c8b26ff2d9d584bb8437c3face45f906b1")
    }
}

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
}
