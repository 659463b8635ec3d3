import XCTest
@testable import TureenCore

/// The blob store names blobs by these digests: libcrypto's must agree with
/// FIPS 180-4's examples, however the bytes are split into updates, and
/// with the digests the hand-written SHA-256 it replaced gave (pinned below),
/// so that every stored blob keeps its name.
final class SHA256Tests: XCTestCase {
    private func digest(_ bytes: [UInt8], pieces: [Int] = []) throws -> String {
        let s = try SHA256()
        var at = 0
        for p in pieces where at + p <= bytes.count {
            bytes[at..<(at + p)].withUnsafeBytes { s.update($0) }
            at += p
        }
        bytes[at...].withUnsafeBytes { s.update($0) }
        return Hex.string(try s.finish())
    }

    /// Byte i is i * 31 + 7 (mod 256).
    private func pattern(_ n: Int) -> [UInt8] { (0..<n).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) } }

    func testKnownAnswers() throws {
        let vectors: [(String, String)] = [
            ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
            ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
            ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
             "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
        ]
        for (text, want) in vectors {
            XCTAssertEqual(try digest(Array(text.utf8)), want, text)
            XCTAssertEqual(Hex.string(try SHA256.digest(Array(text.utf8))), want, text)
        }
        let million = [UInt8](repeating: 0x61, count: 1_000_000)
        XCTAssertEqual(try digest(million, pieces: [1, 63, 64, 65, 4096]),
                       "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    /// Computed by the hand-written SHA-256 (with and without the CPU's SHA
    /// extensions) before it was replaced.
    func testTheDigestsOfTheCodeItReplaced() throws {
        let pinned: [(Int, String)] = [
            (1, "ca358758f6d27e6cf45272937977a748fd88391db679ceda7dc7bf1f005ee879"),
            (55, "8aa994584139d128848eeebc4e815639ba5ab6e6e39574195a63ac4f14f7c43b"),
            (56, "ad574708f75c044c9b85de64cb568ee7711ff4f36448c6242f053ba8f6cc2b63"),
            (63, "280ed3e8ff1df845b2e7dfe6ac6cee817bef20e783cc65abc41b818b4d2fe076"),
            (64, "c6ab9724ade5b6a7a1edfffb12f3aa9181351355af8fd08c919952ad211339dd"),
            (65, "788367c73c7ddf4c53f65e68cc0d943e6227ab55b0e78ba63ace822b1c6301c0"),
            (1000, "5097e7d587352f5097062ae679f37bda5802d9f875aba14c8cb4d1a188ada179"),
            (65_536, "ef4636928161808e87035fa51983821677527ccd9661991c5d0126a778b2268a"),
            (1_048_577, "0d09f3eabb5c78e5d435c41e3b3755f1c4d038657f739d0be0083c24e71235df"),
        ]
        for (n, want) in pinned { XCTAssertEqual(try digest(pattern(n), pieces: [7, 64, 1000]), want, "length \(n)") }
        XCTAssertEqual(Hex.string(try SHA256.digest(Array("tureen".utf8))),
                       "56907e5214b9d15fbce0d1c349c6f73b2f49d0befcbe2bef7c6bd5490afd26ab")
    }

    func testEverySplitGivesTheOneShotDigest() throws {
        var rng = SystemRandomNumberGenerator()
        for length in Array(0...130) + [1023, 1024, 1025, 65_536, 262_145] {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let split = (0..<3).map { _ in Int.random(in: 0...max(1, length / 2), using: &rng) }
            XCTAssertEqual(try digest(bytes, pieces: split), Hex.string(try SHA256.digest(bytes)), "length \(length)")
        }
    }

    func testAHasherIsSpentOnceFinished() throws {
        let s = try SHA256()
        s.update(Array("abc".utf8))
        _ = try s.finish()
        XCTAssertThrowsError(try s.finish())
    }
}
