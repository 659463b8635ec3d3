import Glibc
import XCTest
@testable import TureenCore

/// RFC 6070's PBKDF2-HMAC-SHA1 vectors, a password longer than a SHA-1 block
/// (hashed first) checked against Python's hashlib.pbkdf2_hmac, and the keys
/// the hand-written PBKDF2 it replaced derived: a store keyed by a
/// passphrase opens only with the same key.
final class PBKDF2Tests: XCTestCase {
    private func derive(_ p: String, _ s: String, _ c: Int, _ len: Int) throws -> String {
        Hex.string(try PBKDF2.sha1(password: Array(p.utf8), salt: Array(s.utf8), iterations: c, keyLength: len))
    }

    /// The salt of the pinned keys: byte i is i * 17 + 3 (mod 256).
    private let salt: [UInt8] = (0..<16).map { UInt8(truncatingIfNeeded: $0 * 17 + 3) }

    private func derive(_ p: [UInt8], _ c: Int, _ len: Int = 32) throws -> String {
        Hex.string(try PBKDF2.sha1(password: p, salt: salt, iterations: c, keyLength: len))
    }

    func testRFC6070() throws {
        XCTAssertEqual(try derive("password", "salt", 1, 20), "0c60c80f961f0e71f3a9b524af6012062fe037a6")
        XCTAssertEqual(try derive("password", "salt", 2, 20), "ea6c014dc72d6f8ccd1ed92ace1d41f0d8de8957")
        XCTAssertEqual(try derive("password", "salt", 4096, 20), "4b007901b765489abead49d926f721d065a429c1")
        XCTAssertEqual(try derive("passwordPASSWORDpassword", "saltSALTsaltSALTsaltSALTsaltSALTsalt", 4096, 25),
                       "3d2eec4fe41c849b80c8d83662c0e44a8b291a964cf2f07038")
        XCTAssertEqual(try derive("pass\0word", "sa\0lt", 4096, 16), "56fa6aa75548099dcc37d7f03425e0c3")
    }

    func testLongPasswordAndTwoBlocks() throws {
        let key = try PBKDF2.sha1(password: Array(repeating: UInt8(ascii: "x"), count: 100), salt: Array(0..<16),
                                  iterations: 1000, keyLength: 32)
        XCTAssertEqual(Hex.string(key), "c11dad0df341d0fd009d6a96ca3d36c8b26ff2d9d584bb8437c3face45f906b1")
    }

    /// Derived by the hand-written PBKDF2 before it was replaced; the first
    /// with the rounds a store takes by default (StoreOptions).
    func testTheKeysOfTheCodeItReplaced() throws {
        XCTAssertEqual(try derive(Array("correct horse battery staple".utf8), 256_000),
                       "b056710d5554780f98b3143d51104ee9cfab7003df6de6affacd1c958ee03f25")
        XCTAssertEqual(try derive(Array("sync bench passphrase".utf8), 64_000),
                       "621c6ef20724a02c42b5b413aae401bb30c5748ae5a9f8710c94b9be24a68c78")
        XCTAssertEqual(try derive([], 1000), "fdac9da3d7bdf810f92a3d9193e3b1df655b53a8b857cc7270e7c65537b1f333")
        XCTAssertEqual(try derive(Array("é€😀".utf8), 1, 48),
                       "92bf49423e3e6096489bd1705c5f6e55d674ddd4e84070c018ff009a82b228a36278eedf410b3ed4da29d62662c8dcb0")
        XCTAssertEqual(try derive([UInt8](repeating: 0x70, count: 100), 10),
                       "e0139f30f30835d457be33369941b6ae58d35c020f1de609077593c7e4fa0457")
        // No rounds at all counted as one.
        XCTAssertEqual(try derive(Array("p".utf8), 0), "1ef9986bc466a60e90f01ecc551b7426e5ee8c51023106f885dd19ef424004e2")
        XCTAssertEqual(try derive(Array("p".utf8), 0), try derive(Array("p".utf8), 1))
    }

    /// Prints how long the default derivation takes (not asserted: the
    /// machine is shared). The hand-written PBKDF2 took 0.180 s at -O on
    /// the 2-core machine it was replaced on.
    func testTimeOfTheDefaultDerivation() throws {
        var times: [Double] = []
        for _ in 0..<5 {
            var t0 = timespec(), t1 = timespec()
            clock_gettime(CLOCK_MONOTONIC, &t0)
            _ = try derive(Array("correct horse battery staple".utf8), 256_000)
            clock_gettime(CLOCK_MONOTONIC, &t1)
            times.append(Double(t1.tv_sec - t0.tv_sec) + Double(t1.tv_nsec - t0.tv_nsec) / 1e9)
        }
        times.sort()
        print("PBKDF2-HMAC-SHA1, 256,000 rounds, libcrypto: median \(times[2]) s of \(times)")
    }
}
