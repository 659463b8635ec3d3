import XCTest
@testable import TureenStore
@testable import TureenCore

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

    /// Collection's reading of stored text: digests spelled plainly, and in
    /// the texts of older stores, spelled with \u escapes.
    func testDigestsAreFoundSpelledPlainlyOrWithEscapes() {
        let hex = String(repeating: "0123456789abcdef", count: 4)
        func found(_ s: String) -> Set<String> {
            var t = s, out = Set<String>()
            t.withUTF8 { BlobRef.digests(inText: $0, into: &out) }
            return out
        }
        let digest: Set<String> = ["sha256-" + hex]
        XCTAssertEqual(found(#"{"d":"sha256-"# + hex + #""}"#), digest)
        XCTAssertEqual(found(#"{"d":"sha256\u002d"# + hex + #""}"#), digest, "an escaped dash")
        XCTAssertEqual(found(#"{"d":"\u0073ha256-"# + hex.dropLast() + #"\u0066"}"#), digest, "escaped letters")
        XCTAssertEqual(found(#"{"sha256\u002d"# + hex + #"":1}"#), digest, "in a member name")
        XCTAssertEqual(found(#"{"a":["x",{"b":"sha256\u002D"# + hex + #""}]}"#), digest, "nested, uppercase hex in the escape")
        XCTAssertEqual(found(#"{"d":"sha256\u00e9"# + hex + #""}"#), [], "an escape of another character")
        XCTAssertEqual(found(#"{"d":"sha256-"# + hex.uppercased() + #""}"#), [], "digests are lowercase")
        XCTAssertEqual(found(#"{"d":"sha256\u002d"# + hex + #""#), [], "text that does not parse is read by its bytes")
    }
}
