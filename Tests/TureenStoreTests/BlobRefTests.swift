import XCTest
@testable import TureenStore

/// `BlobRef.mayOccur` decides whether an upserted entry is searched for
/// blob references at all: a miss would store a reference to a blob the
/// store does not hold.
final class BlobRefTests: XCTestCase {
    func testMayOccurFindsThePrefixWhereverItStands() {
        func may(_ s: String) -> Bool {
            var t = s
            return t.withUTF8 { BlobRef.mayOccur(in: UnsafeRawBufferPointer($0)) }
        }
        XCTAssertTrue(may("sha256-"), "the whole text")
        XCTAssertTrue(may(#"{"b":{"digest":"sha256-00ff"}}"#))
        XCTAssertTrue(may(#"{"x":"a-b-sha256-sha256-"}"#), "after other dashes")
        XCTAssertTrue(may(String(repeating: "s-", count: 5000) + "sha256-"), "at the very end, after many candidates")
        XCTAssertFalse(may(""))
        XCTAssertFalse(may("ha256-"))
        XCTAssertFalse(may("sha256"), "no dash")
        XCTAssertFalse(may(#"{"x":"-sha256","y":"sha25-6","z":"SHA256-"}"#))
        XCTAssertFalse(may(String(repeating: "sha256 - ", count: 1000)))
    }
}
