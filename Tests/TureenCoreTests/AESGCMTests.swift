import XCTest
@testable import TureenCore

/// The libcrypto binding, against the AES-256 test cases of the GCM
/// specification (McGrew and Viega, "The Galois/Counter Mode of
/// Operation", test cases 13, 14 and 16; also in NIST's GCM vectors).
final class AESGCMTests: XCTestCase {
    private func check(key: String, iv: String, plaintext: String, aad: String, sealed: String,
                       file: StaticString = #filePath, line: UInt = #line) throws {
        let k = TestKeys.key(hex: key)
        let p = TestKeys.bytes(hex: plaintext), a = TestKeys.bytes(hex: aad), n = TestKeys.bytes(hex: iv)
        let out = try p.withUnsafeBytes { try AESGCM.seal($0, key: k, nonce: n, aad: a) }
        XCTAssertEqual(Hex.string(out), sealed, file: file, line: line)
        let back = try out.withUnsafeBytes { try AESGCM.open($0, key: k, nonce: n, aad: a) }
        XCTAssertEqual(back, p, file: file, line: line)
    }

    func testCase13EmptyPlaintext() throws {
        try check(key: String(repeating: "0", count: 64), iv: String(repeating: "0", count: 24), plaintext: "", aad: "",
                  sealed: "530f8afbc74536b9a963b4f1c4cb738b")
    }

    func testCase14OneBlock() throws {
        try check(key: String(repeating: "0", count: 64), iv: String(repeating: "0", count: 24),
                  plaintext: String(repeating: "0", count: 32), aad: "",
                  sealed: "cea7403d4d606b6e074ec5d3baf39d18" + "d0d1c8a799996bf0265b98b5d48ab919")
    }

    func testCase16WithAssociatedData() throws {
        try check(key: "feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308",
                  iv: "cafebabefacedbaddecaf888",
                  plaintext: "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
                      + "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39",
                  aad: "feedfacedeadbeeffeedfacedeadbeefabaddad2",
                  sealed: "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa"
                      + "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662"
                      + "76fc6ece0f4e1768cddf8853bb2d551b")
    }

    func testEveryAlteredByteAndAnotherAssociatedDataFailToOpen() throws {
        let k = TestKeys.key(hex: TestKeys.hex1)
        let n = [UInt8](repeating: 7, count: 12)
        let sealed = try Array("some plaintext".utf8).withUnsafeBytes { try AESGCM.seal($0, key: k, nonce: n, aad: [1, 2]) }
        for i in sealed.indices {
            var bad = sealed
            bad[i] ^= 0x01
            XCTAssertNil(try bad.withUnsafeBytes { try AESGCM.open($0, key: k, nonce: n, aad: [1, 2]) }, "byte \(i)")
        }
        XCTAssertNil(try sealed.withUnsafeBytes { try AESGCM.open($0, key: k, nonce: n, aad: [1, 3]) })
        XCTAssertNil(try sealed.dropLast().withUnsafeBytes { try AESGCM.open($0, key: k, nonce: n, aad: [1, 2]) })
        XCTAssertNil(try Array(sealed.prefix(15)).withUnsafeBytes { try AESGCM.open($0, key: k, nonce: n, aad: [1, 2]) })
    }

    func testRandomBytesDiffer() throws {
        XCTAssertNotEqual(try SecureRandom.bytes(16), try SecureRandom.bytes(16))
        XCTAssertEqual(try SecureRandom.bytes(0), [])
    }

    /// RFC 4231 test case 2 through the key derivation.
    func testHMACSHA256KnownAnswer() throws {
        let key = SecretKey(count: 4) { $0.copyBytes(from: Array("Jefe".utf8)) }
        let mac = try HMACSHA256.key(from: key, message: Array("what do ya want for nothing?".utf8))
        XCTAssertEqual(mac.withBytes { Hex.string($0) }, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }
}
