import XCTest
import Glibc
@testable import TureenStore
@testable import TureenCore

/// The reference's full-text query syntax table (SmartStore 3.3, "Full-Text
/// Query Syntax", the animals soup), row by row, with its one correction:
/// "brown" (record 4) also starts with b, so b* returns 1, 3 and 4.
final class FullTextTests: XCTestCase {
    var dir = ""
    var store: Store!

    override func setUpWithError() throws {
        dir = makeTestDirectory()
        store = try Store.open(path: dir + "/a.db", options: try StoreOptions.parseOpen(#"{"unencrypted":true}"#))
        try store.registerSoup("animals", specs: [IndexSpec(path: "name", type: .fullText), IndexSpec(path: "color", type: .fullText)])
        _ = try store.upsert(soup: "animals", entries: """
            [{"id": 1, "name": "cat", "color": "black"}, {"id": 2, "name": "cat", "color": "white"},
             {"id": 3, "name": "dog", "color": "black"}, {"id": 4, "name": "dog", "color": "brown"},
             {"id": 5, "name": "dog", "color": "white"}]
            """, externalIdPath: nil)
    }

    override func tearDown() {
        try? store.close()
        removeTestDirectory(dir)
    }

    private func ids(path: String?, _ key: String) throws -> [Int64] {
        var spec = JSONObject()
        spec["queryType"] = .string("match")
        spec["soupName"] = .string("animals")
        spec["indexPath"] = path.map { .string($0) } ?? .null
        spec["matchKey"] = .string(key)
        spec["orderPath"] = .string("_soupEntryId")
        spec["pageSize"] = .int(100)
        let out = try store.query(try QuerySpec.parse(JSONWriter.string(.object(spec))), pageIndex: 0)
        guard case .array(let items) = try JSONParser.parse(String(decoding: out, as: UTF8.self)) else { return [] }
        return items.compactMap { $0["id"]?.int64Value }
    }

    func testReferenceTable() throws {
        XCTAssertEqual(try ids(path: nil, "black"), [1, 3], "a")
        XCTAssertEqual(try ids(path: nil, "black cat"), [1], "b")
        XCTAssertEqual(try ids(path: nil, "black OR cat"), [1, 2, 3], "c")
        XCTAssertEqual(try ids(path: nil, "b*"), [1, 3, 4], "d (corrected)")
        XCTAssertEqual(try ids(path: nil, "black NOT cat"), [3], "e")
        XCTAssertEqual(try ids(path: nil, "{animals:color}:black NOT cat"), [3], "f")
        XCTAssertEqual(try ids(path: "color", "black"), [1, 3], "g")
        XCTAssertEqual(try ids(path: "color", "black cat"), [], "h")
        XCTAssertEqual(try ids(path: "color", "black OR cat"), [1, 3], "i")
        XCTAssertEqual(try ids(path: "color", "b*"), [1, 3, 4], "j (corrected)")
        XCTAssertEqual(try ids(path: "color", "black NOT cat"), [1, 3], "k")
    }

    func testPhrasesAndHostileKeys() throws {
        _ = try store.upsert(soup: "animals", entries: #"{"id": 6, "name": "big cat", "color": "black white"}"#, externalIdPath: nil)
        XCTAssertEqual(try ids(path: nil, #""black white""#), [6])
        XCTAssertEqual(try ids(path: nil, #""white black""#), [])
        XCTAssertEqual(try ids(path: nil, "cat') OR 1=1 --"), [], "quotes and SQL are words")
        for bad in ["NOT cat", "black NOT", "OR", "{animals:name", "{animals:size}:x", "{other:name}:cat", "\"unclosed"] {
            XCTAssertThrowsError(try ids(path: nil, bad), bad) { XCTAssertEqual(($0 as? TureenError)?.code, .query, bad) }
        }
    }

    /// Found by fuzz/targets/full_text.swift: FTS4 separates words at '_',
    /// so a word of underscores alone reached it as an empty term and the
    /// translated key failed in SQLite as a malformed MATCH expression.
    func testUnderscoresAloneSeparateWords() throws {
        XCTAssertEqual(try ids(path: nil, "black _"), [1, 3])
        XCTAssertEqual(try ids(path: nil, "black OR __ cat"), [1, 2, 3], "underscores alone are a separator")
        XCTAssertEqual(try ids(path: "color", "\"_ black _\""), [1, 3])
        XCTAssertEqual(try ids(path: nil, "black_"), [1, 3], "underscores inside a word still belong to it")
        for bad in ["black OR _", "black NOT _", "{animals:color}:_", "_", "\"_\""] {
            XCTAssertThrowsError(try ids(path: nil, bad), bad) { e in
                XCTAssertEqual((e as? TureenError)?.code, .query, bad)
                XCTAssertFalse("\(e)".contains("malformed MATCH"), "\(bad): refused by the translation, not by SQLite: \(e)")
            }
        }
    }

    func testRemoveByMatchAndFullTextFollowsUpdates() throws {
        _ = try store.upsert(soup: "animals", entries: #"{"_soupEntryId": 1, "id": 1, "name": "cat", "color": "grey"}"#, externalIdPath: nil)
        XCTAssertEqual(try ids(path: "color", "black"), [3])
        XCTAssertEqual(try store.removeByQuery(try QuerySpec.parse(#"{"queryType":"match","soupName":"animals","indexPath":null,"matchKey":"dog"}"#)), 3)
        XCTAssertEqual(try ids(path: nil, "cat OR dog"), [1, 2])
        XCTAssertTrue(try store.integrityProblems().isEmpty)
    }
}
