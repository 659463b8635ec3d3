import XCTest
@testable import TureenStore
@testable import TureenCore

final class IndexValueTests: XCTestCase {
    private func value(_ doc: String, _ path: String, _ type: IndexType) throws -> SQLValue {
        IndexValue.of(try JSONParser.parse(doc), segments: path.split(separator: ".", omittingEmptySubsequences: false), type: type)
    }

    func testConversionRules() throws {
        XCTAssertEqual(try value(#"{"a":41.9}"#, "a", .integer), .int(41))
        XCTAssertEqual(try value(#"{"a":-41.9}"#, "a", .integer), .int(-41))
        XCTAssertEqual(try value(#"{"a":" 17 "}"#, "a", .integer), .int(17))
        XCTAssertEqual(try value(#"{"a":"x"}"#, "a", .integer), .null)
        XCTAssertEqual(try value(#"{"a":true}"#, "a", .integer), .int(1))
        XCTAssertEqual(try value(#"{"a":1e300}"#, "a", .integer), .int(.max))
        XCTAssertEqual(try value(#"{"a":-1e30}"#, "a", .integer), .int(.min))
        XCTAssertEqual(try value(#"{"a":9223372036854775808}"#, "a", .integer), .int(.max))
        XCTAssertEqual(try value(#"{"a":-9223372036854775809}"#, "a", .integer), .int(.min))
        XCTAssertEqual(try value(#"{"a":9223372036854774784.0}"#, "a", .integer), .int(9_223_372_036_854_774_784))
        XCTAssertEqual(try value(#"{"a":"1e30"}"#, "a", .integer), .int(.max))
        XCTAssertEqual(try value(#"{"a":"NaN"}"#, "a", .integer), .null)
        XCTAssertEqual(try value(#"{"a":"1e999"}"#, "a", .integer), .null)
        XCTAssertEqual(try value(#"{"a":"2.5"}"#, "a", .floating), .double(2.5))
        XCTAssertEqual(try value(#"{"a":{"b":1}}"#, "a", .floating), .null)
        XCTAssertEqual(try value(#"{"a":12}"#, "a", .string), .text("12"))
        XCTAssertEqual(try value(#"{"a":false}"#, "a", .string), .text("false"))
        XCTAssertEqual(try value(#"{"a":{"b":[1]}}"#, "a", .string), .text(#"{"b":[1]}"#))
        XCTAssertEqual(try value(#"{"a":null}"#, "a", .string), .null)
        XCTAssertEqual(try value(#"{}"#, "a.b", .string), .null)
        XCTAssertEqual(try value(#"{"t":[{"n":"a"},{"n":"b"},{"m":1}]}"#, "t.n", .string), .text(#"["a","b"]"#))
        XCTAssertEqual(try value(#"{"t":[{"n":"a"}]}"#, "t.n", .string), .text(#"["a"]"#))
        XCTAssertEqual(try value(#"{"t":[{"n":"a b"},{"n":"c"}]}"#, "t.n", .fullText), .text("a b c"))
        XCTAssertEqual(try value(#"{"t":[3]}"#, "t", .integer), .int(3))
        XCTAssertEqual(try value(#"{"t":[3,4]}"#, "t", .integer), .null)
    }

    /// A query key converts as a projection of the key itself would: an
    /// array key as an entry's array value (one element, several, none).
    func testQueryKeysConvertAsTheirOwnProjection() throws {
        let keys = [#"5"#, #"5.7"#, #""12""#, #"true"#, #"null"#, #"{"a":1}"#, #"[3]"#, #"[3,4]"#, #"[]"#, #"["a","b c"]"#, #"[null]"#]
        for text in keys {
            let key = try JSONParser.parse(text)
            for type in IndexType.allCases {
                XCTAssertEqual(IndexValue.ofKey(key, type: type), IndexValue.of(key, segments: [], type: type), "\(text) as \(type)")
            }
        }
        XCTAssertEqual(IndexValue.ofKey(try JSONParser.parse("[3]"), type: .integer), .int(3))
        XCTAssertEqual(IndexValue.ofKey(try JSONParser.parse(#"["a"]"#), type: .string), .text(#"["a"]"#))
    }

    /// The scanner (used by SQL over stored text) must agree with the tree
    /// projection (used by upsert) on every document and path.
    func testScannerAgreesWithTreeProjection() throws {
        let docs = [
            #"{"a":1,"b":{"c":"x,]}","d":[{"e":1},{"e":[2,3]},{"f":{"e":9}},"s",[{"e":4}]]},"g":"\"q\"","h\u0069":true}"#,
            #"{"b":{"d":[]},"a":[1,[2,{"a":3}]],"z":{"y":{"x":null}}}"#,
            #"[{"a":1},{"a":2}]"#,
            #"{"a":{"a":{"a":"deep"}},"hi":"escaped name"}"#,
        ]
        let paths = ["a", "b.c", "b.d", "b.d.e", "g", "hi", "z.y.x", "z.y", "a.a", "a.a.a", "missing", "b.missing.x"]
        for d in docs {
            let tree = try JSONParser.parse(d)
            for p in paths {
                let segs = p.split(separator: ".", omittingEmptySubsequences: false)
                let expected = JSONPath.project(tree, segs)
                var text = d
                let got = try text.withUTF8 { try JSONScanner.project($0, segs.map { Array($0.utf8) }) }
                XCTAssertEqual(got.values, expected.values, "\(p) in \(d)")
                XCTAssertEqual(got.crossedArray, expected.crossedArray, "\(p) in \(d)")
            }
            // Every path at once (what upsert reads) gives the same.
            var text = d
            let segments = paths.map { $0.split(separator: ".", omittingEmptySubsequences: false).map { Array($0.utf8) } }
            let together = try text.withUTF8 { try JSONScanner.project($0, paths: segments) }
            for (i, p) in paths.enumerated() {
                let expected = JSONPath.project(tree, p.split(separator: ".", omittingEmptySubsequences: false))
                XCTAssertEqual(together[i].values, expected.values, "\(p) in \(d), all paths at once")
                XCTAssertEqual(together[i].crossedArray, expected.crossedArray, "\(p) in \(d), all paths at once")
            }
        }
    }

    /// Repeated names (which stored entries never have) and escaped ones:
    /// all paths at once still give what each path gives alone.
    func testAllPathsAtOnceMatchOneByOne() throws {
        var doc = #"{"b":{"c":1},"\u0061":[{"x":2}],"b":{"c":3},"a":4,"e":"x"}"#
        let paths = ["b.c", "a", "a.x", "b", "e", "e.f", "missing"]
        let segments = paths.map { $0.split(separator: ".").map { Array($0.utf8) } }
        let together = try doc.withUTF8 { try JSONScanner.project($0, paths: segments) }
        for (i, s) in segments.enumerated() {
            let alone = try doc.withUTF8 { try JSONScanner.project($0, s) }
            XCTAssertEqual(together[i].values, alone.values, paths[i])
            XCTAssertEqual(together[i].crossedArray, alone.crossedArray, paths[i])
        }
        XCTAssertEqual(together[0].values, [.int(1)], "the first of a repeated name, as one path alone reads it")
        XCTAssertEqual(together[2].values, [.int(2)])
    }

    /// SmartStore's testProjectThroughArrays: results keep the nesting.
    func testNestedProjection() throws {
        var doc = #"""
        {"a":"a1","b":2,"c":[{"cc":"cc1"},{"cc":2},{"cc":[1,2,3]},{},{"cc":{"cc5":5}}],
         "d":[{"dd":[{"ddd":"ddd11"},{"ddd":"ddd12"}]},{"dd":[{"ddd":"ddd21"}]},{"dd":[{"ddd":"ddd31"},{"ddd3":"ddd32"}]}],
         "e":[],"n":null,"f":[null,{"g":null}]}
        """#
        let expected: [(String, String?)] = [
            ("a", #""a1""#), ("c.cc", #"["cc1",2,[1,2,3],{"cc5":5}]"#), ("c.cc.cc5", "[5]"),
            ("d.dd.ddd", #"[["ddd11","ddd12"],["ddd21"],["ddd31"]]"#), ("d.dd.ddd3", #"[["ddd32"]]"#),
            ("e", "[]"), ("e.x", nil), ("n", "null"), ("n.x", nil), ("f.g", "[null]"), ("missing", nil),
        ]
        for (path, want) in expected {
            let segments = path.split(separator: ".").map { Array($0.utf8) }
            let got = try doc.withUTF8 { try JSONScanner.nested($0, segments) }
            XCTAssertEqual(got, try want.map { try JSONParser.parse($0) }, path)
        }
    }

    /// The scanner reads entries that were checked when written, but must
    /// not hang on any text: a closer or a comma where a value should be is
    /// an error. (It used to end the value there, so the loop over an array
    /// walked on past the array, and a few hundred brackets took minutes:
    /// fuzz/corpus/json/regress-scanner-closer-*.)
    func testScannerRefusesAMissingValue() {
        for bad in ["[1,]]", "[,1]", "[1,,2]", #"[{"a":1},]"#, #"[[1],]]"#] {
            for path in ["a", "a.b"] {
                var text = bad
                let segments = path.split(separator: ".").map { Array($0.utf8) }
                XCTAssertThrowsError(try text.withUTF8 { try JSONScanner.project($0, segments) }, "project \(path) over \(bad)")
            }
        }
    }
}
