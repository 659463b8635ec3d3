import XCTest
import Glibc
@testable import TureenStore
@testable import TureenCore

final class SoupTests: XCTestCase {
    var dir = ""
    var store: Store!

    override func setUpWithError() throws {
        dir = makeTestDirectory()
        store = try Store.open(path: dir + "/s.db", options: try StoreOptions.parseOpen(#"{"key":"k","kdf_iter":1000}"#))
        try store.registerSoup("people", specs: [IndexSpec(path: "name", type: .string), IndexSpec(path: "ext", type: .string)])
    }

    override func tearDown() {
        try? store.close()
        removeTestDirectory(dir)
    }

    private func count(_ spec: String) throws -> Int64 { try store.count(try QuerySpec.parse(spec)) }

    func testConstraintViolationWritesNothingOfTheBatch() throws {
        _ = try store.upsert(soup: "people", entries: #"[{"name":"a","ext":"x"},{"name":"b","ext":"x"}]"#, externalIdPath: nil)
        XCTAssertThrowsError(try store.upsert(soup: "people", entries: #"[{"name":"c","ext":"y"},{"name":"d","ext":"x"}]"#, externalIdPath: "ext")) {
            XCTAssertEqual(($0 as? TureenError)?.code, .constraint)
            XCTAssertTrue(($0 as? TureenError)?.message.hasPrefix("entry 1:") ?? false)
        }
        XCTAssertEqual(try count(#"{"queryType":"all","soupName":"people"}"#), 2)
    }

    func testComputedIndexFromAlterSurvivesReopenAndFollowsWrites() throws {
        _ = try store.upsert(soup: "people", entries: #"[{"name":"a","age":"30"},{"name":"b","age":41}]"#, externalIdPath: nil)
        try store.alterSoup("people", specs: [IndexSpec(path: "name", type: .string), IndexSpec(path: "age", type: .integer)], reindex: true)
        XCTAssertTrue(try store.withReader { try store.catalog.soup("people", $0) }.indexes[1].computed)
        _ = try store.upsert(soup: "people", entries: #"{"name":"c","age":30.9}"#, externalIdPath: nil)
        try store.close()
        store = try Store.open(path: dir + "/s.db", options: try StoreOptions.parseOpen(#"{"key":"k","kdf_iter":1000}"#))
        XCTAssertEqual(try count(#"{"queryType":"exact","soupName":"people","indexPath":"age","matchKey":30}"#), 2)
        XCTAssertTrue(try store.integrityProblems().isEmpty)
    }

    func testAlterWithoutReindexLeavesNewIndexEmptyUntilReindexed() throws {
        _ = try store.upsert(soup: "people", entries: #"{"name":"a","city":"Oslo"}"#, externalIdPath: nil)
        try store.alterSoup("people", specs: [IndexSpec(path: "name", type: .string), IndexSpec(path: "city", type: .string)], reindex: false)
        let oslo = #"{"queryType":"exact","soupName":"people","indexPath":"city","matchKey":"Oslo"}"#
        XCTAssertEqual(try count(oslo), 0)
        try store.reindexSoup("people", paths: ["city"])
        XCTAssertEqual(try count(oslo), 1)
    }

    func testRemoveByQueryRemovesEveryMatchNotOnePage() throws {
        let many = "[" + (0..<50).map { #"{"name":"n\#($0 % 2)"}"# }.joined(separator: ",") + "]"
        _ = try store.upsert(soup: "people", entries: many, externalIdPath: nil)
        let removed = try store.removeByQuery(try QuerySpec.parse(#"{"queryType":"exact","soupName":"people","indexPath":"name","matchKey":"n1","pageSize":3}"#))
        XCTAssertEqual(removed, 25)
        XCTAssertEqual(try count(#"{"queryType":"all","soupName":"people"}"#), 25)
    }
}
