import XCTest
@testable import TureenStore
@testable import TureenCore

/// Large objects are looked up through an index (`JSONObject.scannedMembers`):
/// what callers see must be what the member-by-member scan gave.
final class JSONObjectTests: XCTestCase {
    /// A small deterministic generator: the same cases every run.
    struct Mix {
        var state: UInt64
        mutating func next(_ n: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int((state >> 33) % UInt64(n))
        }
    }

    func testUpdateDoesWhatSettingEachMemberDoes() {
        var mix = Mix(state: 7)
        for round in 0..<400 {
            var start = JSONObject()
            for i in 0..<mix.next(40) { start["k\(mix.next(60))"] = .int(Int64(i)) }
            var changes: [(String, JSON?)] = []
            for _ in 0..<mix.next(80) {
                changes.append(("k\(mix.next(60))", mix.next(4) == 0 ? nil : .int(Int64(mix.next(1000)))))
            }
            var expected = start
            for (k, v) in changes { expected[k] = v }
            var got = start
            got.update(changes)
            XCTAssertEqual(got.members.map { $0.key }, expected.members.map { $0.key }, "round \(round): order")
            XCTAssertEqual(got, expected, "round \(round)")
        }
    }

    func testMadeFromPairsAsIfSetOneByOne() {
        var mix = Mix(state: 5)
        for round in 0..<300 {
            // Below and past scannedMembers, names often repeated.
            let pairs = (0..<mix.next(70)).map { i in ("k\(mix.next(40))", JSON.int(Int64(i))) }
            var expected = JSONObject()
            for (k, v) in pairs { expected[k] = v }
            let got = JSONObject(pairs)
            XCTAssertEqual(got.members.map { $0.key }, expected.members.map { $0.key }, "round \(round): order")
            XCTAssertEqual(got, expected, "round \(round)")
        }
    }

    func testEqualityAndLookupsAgreeWithAScan() throws {
        var mix = Mix(state: 11)
        for round in 0..<300 {
            var a = JSONObject()
            for _ in 0..<mix.next(50) { a["k\(mix.next(70))"] = .int(Int64(mix.next(3))) }
            // b: a's members in another order, sometimes one value or name changed
            var b = JSONObject()
            for m in a.members.reversed() { b[m.key] = m.value }
            let edit = mix.next(3)
            if edit == 1, let m = b.members.first { b[m.key] = .string("x") }
            if edit == 2, let m = b.members.first { b[m.key] = nil; b["other"] = m.value }
            let scanned = a.members.count == b.members.count && a.members.allSatisfy { b[$0.key] == $0.value }
            XCTAssertEqual(a == b, scanned, "round \(round)")
            let index = b.indexForLookups()
            for k in (0..<70).map({ "k\($0)" }) + ["other"] {
                XCTAssertEqual(b.value(k, index: index), b[k], "round \(round), \(k)")
            }
        }
    }

    /// The parser and the skim find a repeated name among many, anywhere.
    func testARepeatedNameIsFoundAmongMany() throws {
        for n in [3, 16, 17, 40, 2000] {
            for at in [0, n / 2, n - 1] {
                let members = (0..<n).map { #""k\#($0)":\#($0)"# } + [#""k\#(at)":"again""#]
                var text = "{" + members.joined(separator: ",") + "}"
                let (v, repeated) = try text.withUTF8 { b -> (JSON, Bool) in
                    var p = JSONParser(b)
                    return (try p.value(depth: 1), p.duplicates)
                }
                XCTAssertTrue(repeated, "\(n) members, k\(at) again")
                XCTAssertEqual(v.objectValue?.count, n)
                XCTAssertEqual(v.objectValue?["k\(at)"], .string("again"), "the last value is kept")
                var skimmed: [JSON] = []
                var bytes = Array(("[" + text + "]").utf8)
                try bytes.withUnsafeMutableBufferPointer { buf in
                    _ = try JSONParser.parseEach(bytes: UnsafeBufferPointer(buf), skimmingObjectsWithout: []) { _, item in
                        if case .plain = item { XCTFail("\(n) members, k\(at) again: skimmed as plain") }
                        if case .parsed(let v, _) = item { skimmed.append(v) }
                    }
                }
                XCTAssertEqual(skimmed, [v])
            }
            var distinct = "[{" + (0..<n).map { #""k\#($0)":\#($0)"# }.joined(separator: ",") + "}]"
            var plain = 0
            try distinct.withUTF8 { b in
                _ = try JSONParser.parseEach(bytes: b, skimmingObjectsWithout: []) { _, item in
                    if case .plain = item { plain += 1 }
                }
            }
            XCTAssertEqual(plain, 1, "\(n) distinct members are skimmed")
        }
    }

    /// Names and strings are told apart by their bytes, in small objects
    /// (a scan) and large ones (the name index), and numbers by their bits.
    func testNamesAndValuesDifferingOnlyInTheirBytesDiffer() throws {
        let nfc = "caf\u{e9}", nfd = "cafe\u{301}"
        XCTAssertEqual(nfc, nfd)  // why: Swift's String == alone would merge them
        for filler in [0, 40] {
            let extra = (0..<filler).map { "\"f\($0)\":0," }.joined()
            let parsed = try JSONParser.parse("{\(extra)\"\(nfc)\":1,\"\(nfd)\":2}").objectValue!
            XCTAssertEqual(parsed.count, filler + 2, "\(filler) fillers")
            XCTAssertEqual(parsed[nfc], .int(1))
            XCTAssertEqual(parsed[nfd], .int(2))
            let index = parsed.indexForLookups()
            XCTAssertEqual(parsed.value(nfd, index: index), .int(2))
            var updated = parsed
            updated.update([(nfd, .int(3))])
            XCTAssertEqual(updated[nfc], .int(1))
            XCTAssertEqual(updated[nfd], .int(3))
            XCTAssertNotEqual(updated, parsed)
        }
        // Hashed apart too: names spelled many ways must not share a bucket.
        XCTAssertNotEqual(ExactString(nfc).hashValue, ExactString(nfd).hashValue)
        XCTAssertEqual(ExactString(nfc).hashValue, ExactString("caf" + "\u{e9}").hashValue)
        XCTAssertNotEqual(JSON.string(nfc), JSON.string(nfd))
        XCTAssertNotEqual(JSON.double(0.0), JSON.double(-0.0))
        XCTAssertEqual(JSON.double(0.1), JSON.double(0.1))
        XCTAssertNotEqual(JSONObject([("a", .string(nfc))]), JSONObject([("a", .string(nfd))]))
    }
}
