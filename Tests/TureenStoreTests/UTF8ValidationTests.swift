import XCTest
@testable import TureenStore
@testable import TureenCore

/// The JSON parser refuses text that is not UTF-8 with its own validator:
/// it must accept and refuse exactly what the standard library does.
final class UTF8ValidationTests: XCTestCase {
    private func agrees(_ bytes: [UInt8], file: StaticString = #filePath, line: UInt = #line) {
        let ours = bytes.withUnsafeBufferPointer { UTF8Validation.string($0) }
        let stdlib = String(validating: bytes, as: UTF8.self)
        XCTAssertEqual(ours, stdlib, "bytes \(bytes.map { String($0, radix: 16) })", file: file, line: line)
    }

    /// Every sequence of one and two bytes, and every three-byte one that
    /// starts with a lead byte of a three-byte form, each after ASCII of
    /// every length up to the word size so the eight-byte scan ends anywhere.
    func testEveryShortSequence() {
        for a in 0...255 {
            agrees([UInt8(a)])
            for b in 0...255 { agrees([UInt8(a), UInt8(b)]) }
        }
        for a in 0xE0...0xEF {
            for b in 0...255 {
                for c in stride(from: 0, through: 255, by: 5) { agrees([UInt8(a), UInt8(b), UInt8(c)]) }
            }
        }
        for pad in 0...9 {
            let ascii = [UInt8](repeating: 0x61, count: pad)
            for tail: [UInt8] in [[0xC3, 0xA9], [0xC3], [0xED, 0xA0, 0x80], [0xF0, 0x9F, 0x98, 0x80], [0xF4, 0x90, 0x80, 0x80], [0x80]] {
                agrees(ascii + tail)
                agrees(ascii + tail + ascii)
            }
        }
    }

    /// Four-byte forms at the edges (overlong, past U+10FFFF, cut short) and
    /// random bytes in long runs, where the word-at-a-time scan matters.
    func testFourByteEdgesAndRandomRuns() {
        for lead in 0xF0...0xF7 {
            for second in [0x7F, 0x80, 0x8F, 0x90, 0xBF, 0xC0] {
                agrees([UInt8(lead), UInt8(second), 0x80, 0x80])
                agrees([UInt8(lead), UInt8(second), 0x80])
                agrees([UInt8(lead), UInt8(second), 0x80, 0x41])
            }
        }
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            let n = Int.random(in: 0...40, using: &rng)
            // Mostly ASCII with a few high bytes, so valid runs occur too.
            let bytes = (0..<n).map { _ in UInt8.random(in: 0...9, using: &rng) == 0 ? UInt8.random(in: 0x80...0xFF, using: &rng) : UInt8.random(in: 0x20...0x7E, using: &rng) }
            agrees(bytes)
            agrees(Array(String(decoding: bytes, as: UTF8.self).utf8))
        }
    }
}
