import XCTest
@testable import TureenStore
@testable import TureenCore

final class JSONTests: XCTestCase {
    func testRoundTripKeepsMemberOrderAndTypes() throws {
        let text = #"{"z":1,"a":[true,false,null],"m":{"x":-2.5,"y":"é\n\"q\""},"big":9007199254740993}"#
        let v = try JSONParser.parse(text)
        XCTAssertEqual(v["z"], .int(1))
        XCTAssertEqual(v["big"], .int(9_007_199_254_740_993))
        XCTAssertEqual(v.objectValue?.keys, ["z", "a", "m", "big"])
        XCTAssertEqual(JSONWriter.string(v), text)
    }

    func testElementsAtAPathAreFoundInTheTextAsTheTreeHasThem() throws {
        func spans(_ text: String, _ path: [String]) throws -> (JSON, [(String, Bool)]?) {
            var text = text
            return try text.withUTF8 { b in
                let (v, elements) = try JSONParser.parse(bytes: b, elementsAt: path)
                return (v, elements?.map { (String(decoding: $0.text, as: UTF8.self), $0.hadDuplicateNames) })
            }
        }
        // The last of a repeated name counts, as in the tree; a repeated name
        // inside an element marks that element only.
        let text = #"{"d":{"r":[9]},"d":{"x":1,"r":[ {"a":1} , {"o":{"k":1,"k":2}},[],"s" ]}}"#
        let (v, found) = try spans(text, ["d", "r"])
        XCTAssertEqual(v, try JSONParser.parse(text))
        XCTAssertEqual(found?.map(\.0), [#"{"a":1}"#, #"{"o":{"k":1,"k":2}}"#, "[]", #""s""#])
        XCTAssertEqual(found?.map(\.1), [false, true, false, false])
        XCTAssertEqual(try spans(#"[1,{"b":2}]"#, []).1?.map(\.0), ["1", #"{"b":2}"#])
        // Not an array there, or no such member: nil.
        XCTAssertNil(try spans(#"{"d":{"r":5}}"#, ["d", "r"]).1)
        XCTAssertNil(try spans(#"{"d":[1]}"#, ["e"]).1)
        XCTAssertNil(try spans(#"{"d":[1],"d":3}"#, ["d"]).1)
        // Malformed text fails as parse(bytes:) fails.
        XCTAssertThrowsError(try spans(#"{"d":[1,]}"#, ["d"]))
    }

    /// Text that spells a printable ASCII character with a \u escape, or an
    /// integer beyond 64 bits, is not stored as it is (needsRewriting), by
    /// the parser and by the skim alike; other escapes and numbers are.
    func testTextThatByteReadersWouldMisreadNeedsRewriting() throws {
        let cases: [(String, Bool)] = [
            (#"{"d":"sha256\u002dab"}"#, true), (#"{"d":"\u0041"}"#, true), (#"{"\u0061":1}"#, true),
            (#"{"d":[{"n":9223372036854775808}]}"#, true), (#"{"n":-9223372036854775809}"#, true),
            (#"{"n":123456789012345678901234567890}"#, true),
            (#"{"d":"caf\u00e9 \ud83d\ude00 \n \" \/ \u0001 \u001F"}"#, false), (#"{"n":9223372036854775807}"#, false),
            (#"{"d":"\u007f"}"#, true), (#"{"d":"\u0020"}"#, true),
            (#"{"n":-9223372036854775808,"m":1.5e300,"k":12345678901234567890.5}"#, false),
        ]
        for (text, rewrite) in cases {
            var t = text
            let (skimmed, parsed) = try t.withUTF8 { b -> (Bool, Bool) in
                var skimmed = false, parsed = false
                try JSONParser.parseEach(bytes: b, skimmingObjectsWithout: []) { _, item in
                    switch item {
                    case .plain: skimmed = true
                    case .parsed(_, let e): parsed = e.needsRewriting
                    }
                }
                return (skimmed, parsed)
            }
            XCTAssertEqual(skimmed, !rewrite, "the skim of \(text)")
            if rewrite { XCTAssertTrue(parsed, "the parse of \(text)") }
            var u = "[" + text + "]"
            let spans = try u.withUTF8 { try JSONParser.parse(bytes: $0, elementsAt: []).1 }
            XCTAssertEqual(spans?.map(\.needsRewriting), [rewrite], text)
        }
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

    /// The string scan reads sixteen bytes at a time: whatever ends or
    /// breaks a string must be seen at every offset within and across those
    /// blocks, by the parser and by the skim upsert uses.
    func testStringsScannedWordWiseSeeEveryByte() throws {
        for n in 0...40 {
            let pad = String(repeating: "a", count: n)
            XCTAssertEqual(try JSONParser.parse("\"\(pad)\""), .string(pad))
            XCTAssertEqual(try JSONParser.parse("[\"\(pad)\\\"\(pad)\",1]"), .array([.string(pad + "\"" + pad), .int(1)]))
            XCTAssertEqual(try JSONParser.parse("\"\(pad)é\(pad)\""), .string(pad + "é" + pad))
            XCTAssertThrowsError(try JSONParser.parse("\"\(pad)\u{1}\(pad)\""), "control character after \(n)")
            XCTAssertThrowsError(try JSONParser.parse("\"\(pad)\u{1F}\(pad)\""), "control character after \(n)")
            XCTAssertThrowsError(try JSONParser.parse("\"\(pad)"), "unterminated after \(n)")
            for bad: [UInt8] in [[0xFF], [0xC3], [0xED, 0xA0, 0x80], [0x80]] {
                let bytes = [0x22] + Array(pad.utf8) + bad + Array(pad.utf8) + [0x22]
                XCTAssertThrowsError(try bytes.withUnsafeBufferPointer { try JSONParser.parse(bytes: $0) }, "\(bad) after \(n)")
                let entries = Array(#"[{"k":"#.utf8) + bytes + Array("}]".utf8)
                XCTAssertThrowsError(try entries.withUnsafeBufferPointer { b in
                    try JSONParser.parseEach(bytes: b, skimmingObjectsWithout: []) { _, _ in }
                }, "skimmed: \(bad) after \(n)")
            }
        }
    }

    /// The writer checks sixteen bytes at a time whether a string needs
    /// escaping: every byte that does must be seen, wherever it falls.
    func testWriterEscapesEveryByteThatNeedsIt() throws {
        for n in 0...40 {
            let pad = String(repeating: "a", count: n)
            for special in ["\"", "\\", "\n", "\u{1}", "\u{1F}", "\u{0}", "\t"] {
                for text in [pad + special, special + pad, pad + special + pad] {
                    let w = JSONWriter(reserving: 64)
                    w.writeString(text)
                    let written = String(decoding: w.bytes, as: UTF8.self)
                    XCTAssertFalse(written.dropFirst().dropLast().unicodeScalars.contains { $0.value < 0x20 },
                                   "a control character written raw in \(written.debugDescription)")
                    XCTAssertEqual(try JSONParser.parse(written), .string(text), "\(text.debugDescription)")
                }
            }
            for plain in [pad, pad + "é😀" + pad, pad + "~\u{7F}" + pad] {
                let w = JSONWriter(reserving: 64)
                w.writeString(plain)
                XCTAssertEqual(w.bytes, [0x22] + Array(plain.utf8) + [0x22], "\(plain.debugDescription) written as it is")
            }
        }
    }

    func testIntegersWrittenAsSwiftPrintsThem() {
        var values: [Int64] = [0, 1, -1, 9, 10, -10, 99, 100, Int64.max, Int64.min, Int64.min + 1, 1_000_000_007]
        var p: Int64 = 1
        for _ in 0..<18 {
            p *= 10
            values += [p - 1, p, -p, -(p - 1)]
        }
        for v in values {
            let w = JSONWriter(reserving: 1)  // grows for each: the digits must not overrun
            w.writeInt(v)
            w.appendRaw(",")
            XCTAssertEqual(w.string, "\(v),")
        }
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

    func testDecimalsReadToTheSameBitsAsSwiftReadsThem() throws {
        // Short decimals take one exact multiplication or division, longer
        // ones strtod: every one must come out bit for bit as Double(String).
        var texts = ["0.0", "-0.0", "0.1", "-0.1", "1e22", "1e23", "1e-22", "1e-23", "4.9e-324", "1.7976931348623157e308",
                     "123456789012345.6", "12345678901234.56e8", "0.000000000000000000001", "2.5E+3", "2.5e-0", "9007199254740993.0",
                     "1.5e-400", "0e0", "-0e-5", "100000000000000000000000.0"]
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            let count = Int.random(in: 1...18, using: &rng)
            var digits = String((0..<count).map { _ in Character(String(Int.random(in: 0...9, using: &rng))) })
            while digits.count > 1 && digits.first == "0" { digits.removeFirst() }
            let point = Int.random(in: 1...digits.count, using: &rng)
            var text = digits.prefix(point) + "." + (point < digits.count ? digits.dropFirst(point) : "0")
            if Bool.random(using: &rng) { text += "e\(Int.random(in: -30...30, using: &rng))" }
            texts.append(Bool.random(using: &rng) ? "-" + text : String(text))
        }
        for text in texts {
            guard let want = Double(text) else { continue }
            guard case .double(let got) = try JSONParser.parse(text) else { return XCTFail("\(text) is no double") }
            XCTAssertEqual(got.bitPattern, want.bitPattern, "\(text): \(got) against \(want)")
        }
    }

    func testIntegersReadAsSwiftReadsThemAtEveryLength() throws {
        // Up to eighteen digits are read straight from the bytes, longer
        // ones through Int64(String): both sides of that line, and the ends.
        var values: [Int64] = [0, 7, -7, Int64.max, Int64.min, Int64.max - 1, Int64.min + 1]
        var p: Int64 = 1
        for _ in 0..<18 {
            p *= 10
            values += [p - 1, p, -p, -(p - 1), p + p / 3]
        }
        for v in values {
            XCTAssertEqual(try JSONParser.parse("\(v)"), .int(v))
            XCTAssertEqual(try JSONParser.parse("[\(v),1]"), .array([.int(v), .int(1)]))
        }
        XCTAssertEqual(try JSONParser.parse("9223372036854775808"), .double(9223372036854775808.0))
        XCTAssertEqual(try JSONParser.parse("-9223372036854775809"), .double(-9223372036854775809.0))
        XCTAssertEqual(try JSONParser.parse("123456789012345678.5"), .double(123456789012345678.5))
        XCTAssertThrowsError(try JSONParser.parse("01"))
        XCTAssertThrowsError(try JSONParser.parse("-"))
    }
}
