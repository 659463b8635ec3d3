import XCTest
@testable import TureenStore
@testable import TureenCore

/// Which live queries a commit's entries can change, decided for every
/// query of a soup at once (Store.anyMatches): the answer for each must be
/// what asking each query alone gives, across statements of many queries
/// and chunks of many ids.
final class LiveQueryDecisionTests: XCTestCase {
    var dir = ""
    var store: Store!
    var ids: [Int64] = []

    override func setUpWithError() throws {
        dir = makeTestDirectory()
        store = try Store.open(path: dir + "/a.db", options: try StoreOptions.parseOpen(#"{"unencrypted":true}"#))
        try store.registerSoup("c", specs: [IndexSpec(path: "k", type: .string), IndexSpec(path: "n", type: .integer),
                                            IndexSpec(path: "t", type: .fullText)])
        let entries = (0..<600).map { n in #"{"k": "x\#(n)", "n": \#(n), "t": "\#(n == 598 ? "needle" : "hay")"}"# }
        let out = try store.upsert(soup: "c", entries: "[" + entries.joined(separator: ",") + "]", externalIdPath: nil)
        guard case .array(let saved)? = try? JSONParser.parse(String(decoding: out, as: UTF8.self)) else {
            return XCTFail("upsert returned no array")
        }
        ids = saved.compactMap { $0["_soupEntryId"]?.int64Value }.sorted()
        XCTAssertEqual(ids.count, 600)
    }

    override func tearDown() {
        try? store.close()
        removeTestDirectory(dir)
    }

    private func spec(_ json: String) throws -> QuerySpec { try QuerySpec.parse(json) }

    private func decide(_ specs: [QuerySpec], _ ids: [Int64]) throws -> [Bool?] {
        try store.withReader { c in try store.anyMatches(specs, ids: ids, on: c) }
    }

    func testEveryQueryOfASoupIsDecidedAsItWouldBeAlone() throws {
        // 250 ranges of n (more keys than one statement takes): the first 60
        // hold entries, the others lie past n = 599.
        var specs = try (0..<250).map { i in
            try spec(#"{"queryType":"range","soupName":"c","indexPath":"n","beginKey":\#(i * 10),"endKey":\#(i * 10 + 3)}"#)
        }
        var expected: [Bool?] = (0..<250).map { $0 < 60 }
        let more: [(String, Bool)] = [
            (#"{"queryType":"exact","soupName":"c","indexPath":"k","matchKey":"x599"}"#, true),
            (#"{"queryType":"exact","soupName":"c","indexPath":"k","matchKey":"nope"}"#, false),
            (#"{"queryType":"like","soupName":"c","indexPath":"k","likeKey":"x59%"}"#, true),
            (#"{"queryType":"like","soupName":"c","indexPath":"k","likeKey":"zz%"}"#, false),
            (#"{"queryType":"all","soupName":"c"}"#, true),
            (#"{"queryType":"match","soupName":"c","indexPath":"t","matchKey":"needle"}"#, true),
            (#"{"queryType":"match","soupName":"c","indexPath":"t","matchKey":"absent"}"#, false),
        ]
        for (json, answer) in more {
            specs.append(try spec(json))
            expected.append(answer)
        }
        // 600 ids: three chunks, the entry "x599" in the last one only.
        XCTAssertEqual(try decide(specs, ids), expected)
        // Only the last entry changed: the ranges find nothing, and the
        // exact, like and all queries still find it.
        XCTAssertEqual(try decide(specs, [ids[599]]), (0..<250).map { _ in false } + [true, false, true, false, true, false, false])
    }

    func testEntriesNoLongerThereMatchNothing() throws {
        let specs = try [spec(#"{"queryType":"all","soupName":"c"}"#),
                         spec(#"{"queryType":"range","soupName":"c","indexPath":"n","beginKey":0,"endKey":1000}"#)]
        let gone = [ids[599] + 1, ids[599] + 2]
        XCTAssertEqual(try decide(specs, gone), [false, false])
    }
}
