import XCTest
@testable import TureenStore
@testable import TureenCore

/// Upsert stores a plain entry as given after only skimming it: the skim
/// must take the usual entry, and must never pass what the parser refuses
/// or what has to be stored re-serialised.
final class JSONSkimTests: XCTestCase {
    private let reserved = [Array("_soupEntryId".utf8)]

    private func skim(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBufferPointer { b -> Bool in
            var p = JSONParser(b)
            var names: [Range<Int>] = []
            var noted: Int?
            let ok = p.skimPlainObject(reserved: reserved, note: nil, noted: &noted, names: &names)
            XCTAssertTrue(names.isEmpty, "scratch names left behind")
            if ok {
                XCTAssertEqual(p.pos, b.count, "the skim stopped early in \(text)")
                XCTAssertNotNil(try? JSONParser.parse(bytes: b), "the skim passed \(text)")
            }
            return ok
        }
    }

    func testTakesPlainEntries() {
        for text in [
            #"{"name":"n1","age":42,"score":-3.25,"city":"Zürich","ext":"e-1","tags":["a","b"],"m":{"x":null,"y":true,"z":false}}"#,
            #"{"text":"a quote \" and a \\ and \u00e9 and \ud83d\ude00","n":0,"wide":-9223372036854775808}"#,
            #"{ "spaced" : [ 1 , { "a" : [ ] } , { } ] , "_soupEntryIdNot" : 1 }"#,
            #"{"nested":{"_soupEntryId":1},"e":1.5e3}"#,
        ] {
            XCTAssertTrue(skim(text), text)
        }
    }

    func testLeavesTheRestToTheParser() {
        for text in [
            #"{}"#, #"[]"#, #""s""#, #"1"#,
            #"{"a":1,"a":2}"#, #"{"o":{"b":1,"b":1}}"#, #"{"\u0061":1}"#, #"{"_soupEntryId":3,"a":1}"#,
            #"{"a":"sha256\u002d"}"#, #"{"a":[9223372036854775808]}"#, #"{"big":123456789012345678901234567890}"#,
            #"{"a":1,}"#, #"{"a":01}"#, #"{"a":-}"#, #"{"a":1.}"#, #"{"a":1e999}"#, #"{"a":tru}"#, #"{"a":"x"#, #"{"a":1"#,
            "{\"a\":\"\u{1}\"}", #"{"a":"\ud800"}"#, #"{"a":"\q"}"#,
            String(repeating: #"{"a":"#, count: 70) + "1" + String(repeating: "}", count: 70),
        ] {
            XCTAssertFalse(skim(text), text)
        }
        for bad: [UInt8] in [[0xFF], [0xC3], [0xED, 0xA0, 0x80]] {
            for inName in [false, true] {
                var bytes = Array(#"{"a":"x"}"#.utf8)
                bytes.insert(contentsOf: bad, at: inName ? 2 : 6)
                let ok = bytes.withUnsafeBufferPointer { b -> Bool in
                    var p = JSONParser(b)
                    var names: [Range<Int>] = []
                    var noted: Int?
                    return p.skimPlainObject(reserved: reserved, note: nil, noted: &noted, names: &names)
                }
                XCTAssertFalse(ok, "invalid UTF-8 \(bad) passed")
            }
        }
    }

    /// The skim notes where an entry's own "id" member's value starts (not
    /// a nested one's), and the record id read there is the one the change
    /// feed's scan of the whole text finds.
    func testNotesTheRecordIdMember() throws {
        var batch = #"[{"a":1,"id":"x"},{"id" : 7},{"v":{"id":1}},{"a":1},{"id":[2]},{"id":1.5,"b":2}]"#
        var noted: [Int?] = []
        var same: [Bool] = []
        _ = try batch.withUTF8 { b in
            try JSONParser.parseEach(bytes: b, skimmingObjectsWithout: reserved, noting: RecordIdFunction.member) { _, item in
                guard case .plain(let t, let at) = item else { return XCTFail("\(item) was not skimmed") }
                noted.append(at)
                let read = at.flatMap { RecordIdFunction.recordId(valueIn: UnsafeBufferPointer(rebasing: t[$0...])) }
                same.append(read == RecordIdFunction.recordId(in: t))
            }
        }
        XCTAssertEqual(noted, [12, 8, nil, nil, 6, 6])
        XCTAssertEqual(same, [true, true, true, true, true, true])
    }

    /// A batch mixes both kinds; each element comes back as the parser would
    /// have given it, and a wrong element is still the parser's error.
    func testBatchesSplitTheSameWay() throws {
        let batch = #"[{"a":1},{"_soupEntryId":2,"a":2},{"a":3,"a":4},{"b":[1,2]}]"#
        var kinds: [String] = []
        var values: [JSON] = []
        var text = batch
        _ = try text.withUTF8 { b in
            try JSONParser.parseEach(bytes: b, skimmingObjectsWithout: reserved) { _, item in
                switch item {
                case .parsed(let v, _): kinds.append("parsed"); values.append(v)
                case .plain(let t, _): kinds.append("plain"); values.append(try JSONParser.parse(bytes: t))
                }
            }
        }
        XCTAssertEqual(kinds, ["plain", "parsed", "parsed", "plain"])
        XCTAssertEqual(JSON.array(values), try JSONParser.parse(batch))
        var wrong = #"[{"a":1},{"a":"\x"}]"#
        XCTAssertThrowsError(try wrong.withUTF8 { b in
            try JSONParser.parseEach(bytes: b, skimmingObjectsWithout: reserved) { _, _ in }
        }) { e in XCTAssertTrue((e as? TureenError)?.message.contains("invalid escape") ?? false, "\(e)") }
    }
}
