import XCTest
@testable import TureenStore
@testable import TureenCore

/// The blob store names blobs by these digests: the hardware rounds and the
/// portable ones must agree with FIPS 180-4's examples and with each other
/// however the bytes are split into updates.
final class SHA256Tests: XCTestCase {
    private func hex(_ d: [UInt8]) -> String { d.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined() }

    private func digest(_ bytes: [UInt8], accelerated: Bool, pieces: [Int] = []) -> String {
        var s = SHA256(accelerated: accelerated)
        var at = 0
        for p in pieces where at + p <= bytes.count {
            bytes[at..<(at + p)].withUnsafeBytes { s.update($0) }
            at += p
        }
        bytes[at...].withUnsafeBytes { s.update($0) }
        return hex(s.finish())
    }

    func testKnownAnswersBothWays() {
        let vectors: [(String, String)] = [
            ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
            ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
            ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
             "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
        ]
        for accelerated in [false, true] {
            for (text, want) in vectors { XCTAssertEqual(digest(Array(text.utf8), accelerated: accelerated), want, text) }
            let million = [UInt8](repeating: 0x61, count: 1_000_000)
            XCTAssertEqual(digest(million, accelerated: accelerated, pieces: [1, 63, 64, 65, 4096]),
                           "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
        }
    }

    func testHardwareAndPortableAgreeOnEveryLengthAndSplit() throws {
        try XCTSkipUnless(SHA256.hardware, "this CPU has no SHA extensions: only the portable rounds run")
        var rng = SystemRandomNumberGenerator()
        for length in Array(0...300) + [1023, 1024, 1025, 65_536, 262_145] {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let split = (0..<3).map { _ in Int.random(in: 0...max(1, length / 2), using: &rng) }
            XCTAssertEqual(digest(bytes, accelerated: true, pieces: split), digest(bytes, accelerated: false), "length \(length)")
        }
    }
}
