import CJSONScan
import XCTest
@testable import TureenCore

/// The C string scan, both ways it runs: sixteen bytes a step (SSE2, on
/// this machine) and eight (the word-wise way other CPUs take), against a
/// byte-by-byte reading, with a byte to stop at at every position of
/// inputs up to 70 bytes long.
final class JSONScanTests: XCTestCase {
    private func expected(_ bytes: [UInt8]) -> (count: Int, high: UInt8) {
        var high: UInt8 = 0
        for (i, b) in bytes.enumerated() {
            if b == 0x22 || b == 0x5C || b < 0x20 { return (i, high) }
            high |= b & 0x80
        }
        return (bytes.count, high)
    }

    private func check(_ bytes: [UInt8], _ why: String) {
        let want = expected(bytes)
        for (name, scan) in [("sixteen", cjsonscan_plain), ("words", cjsonscan_plain_words)] {
            var high: UInt8 = 0
            let count = bytes.withUnsafeBufferPointer { scan($0.baseAddress, $0.count, &high) }
            XCTAssertEqual(count, want.count, "\(name): \(why)")
            XCTAssertEqual(high, want.high, "\(name): high bit, \(why)")
        }
    }

    func testEveryStopByteAtEveryPosition() {
        // 0x7F and 0x20 must not stop; the borrow tricks are likeliest wrong next to the limits.
        let fillers: [UInt8] = [0x61, 0x20, 0x7F, 0x21, 0x5B, 0x5D, 0xC3, 0xFF, 0x80]
        let stops: [UInt8] = [0x22, 0x5C, 0x00, 0x01, 0x1F, 0x0A]
        for length in 0...70 {
            for filler in fillers {
                let plain = [UInt8](repeating: filler, count: length)
                check(plain, "\(length) x \(filler)")
                for at in 0..<length {
                    for stop in stops {
                        var b = plain
                        b[at] = stop
                        check(b, "\(stop) at \(at) of \(length) x \(filler)")
                    }
                    var b = [UInt8](repeating: 0x61, count: length)
                    b[at] = 0xE9
                    check(b, "one high byte at \(at) of \(length)")
                    if at + 1 < length {
                        b[at + 1] = 0x22
                        check(b, "a high byte just before the stop at \(at + 1) of \(length)")
                    }
                }
            }
        }
    }

    func testRandomBytes() {
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            let length = Int.random(in: 0...80, using: &rng)
            // Mostly plain bytes, so that scans run long before they stop.
            let bytes = (0..<length).map { _ in
                UInt8.random(in: 0...40, using: &rng) == 0 ? UInt8.random(in: 0...255, using: &rng) : UInt8.random(in: 0x20...0xFF, using: &rng)
            }
            check(bytes, "\(bytes)")
        }
    }
}
