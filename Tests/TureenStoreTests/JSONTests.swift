import XCTest
@testable import TureenStore

final class JSONTests: XCTestCase {
    func testRoundTripKeepsMemberOrderAndTypes() throws {
        let text = #"{"z":1,"a":[true,false,null],"m":{"x":-2.5,"y":"é\n\"q\""},"big":9007199254740993}"#
        let v = try JSONParser.parse(text)
        XCTAssertEqual(v["z"], .int(1))
        XCTAssertEqual(v["big"], .int(9_007_199_254_740_993))
        XCTAssertEqual(v.objectValue?.keys, ["z", "a", "m", "big"])
        XCTAssertEqual(JSONWriter.string(v), text)
    }

    func testEscapesAndSurrogatePairs() throws {
        let v = try JSONParser.parse(#""\u00e9\ud83d\ude00\t\/""#)
        XCTAssertEqual(v, .string("é😀\t/"))
        XCTAssertEqual(JSONWriter.string(.string("\u{1}")), #""\u0001""#)
    }

    func testRejectsMalformedInputWithPosition() {
        for bad in ["", "{", "[1,]", "{\"a\" 1}", "01", "1.", "tru", "\"\\ud800\"", "\"a\u{1}\"", "[1] x", "{\"a\":1,}", "nan"] {
            XCTAssertThrowsError(try JSONParser.parse(bad), "accepted \(bad)") { e in
                XCTAssertEqual((e as? TureenError)?.code, .invalid)
                XCTAssertTrue((e as? TureenError)?.message.contains("at byte") ?? false)
            }
        }
    }

    func testRejectsInvalidUTF8() {
        let bytes: [UInt8] = [0x22, 0xFF, 0xFE, 0x22]
        XCTAssertThrowsError(try bytes.withUnsafeBufferPointer { try JSONParser.parse(bytes: $0) })
    }

    func testDepthLimitIsAnErrorNotACrash() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        XCTAssertThrowsError(try JSONParser.parse(deep))
        let ok = String(repeating: "[", count: 500) + String(repeating: "]", count: 500)
        XCTAssertNoThrow(try JSONParser.parse(ok))
    }

    func testNumbers() throws {
        XCTAssertEqual(try JSONParser.parse("-0"), .int(0))
        XCTAssertEqual(try JSONParser.parse("1e2"), .double(100))
        XCTAssertEqual(try JSONParser.parse("92233720368547758070"), .double(9.223372036854776e19))
        XCTAssertThrowsError(try JSONParser.parse("1e400"))
        XCTAssertEqual(JSONWriter.string(.double(.infinity)), "null")
    }
}
