import XCTest
@testable import TureenStore
@testable import TureenCore

/// The facility engines get: side records that live and die with their
/// entry (with a snapshot slot), keyed tables, reserved soups, and a read
/// transaction that refuses their writes.
final class FacilityTests: XCTestCase {
    var dir = ""
    var store: Store!

    static let copies = SideTable("test_copies", columns: [EngineColumn("copy", .json, nullable: true), EngineColumn("n", .integer)],
                                  snapshot: .init(column: "copy", trigger: "test_keep"), forgetTrigger: "test_forget")
    static let uses = SideTable("test_uses", key: .entry, columns: [EngineColumn("at", .integer), EngineColumn("size", .integer)],
                                forgetTrigger: "test_forget_use")
    static let settings = KeyedTable("test_settings", key: "k", columns: [EngineColumn("v", .text), EngineColumn("w", .text)])

    override func setUpWithError() throws {
        dir = makeTestDirectory()
        store = try Store.open(path: dir + "/s.db", options: try StoreOptions.parseOpen(#"{"key":"k","kdf_iter":1000}"#))
        try store.registerSoup("things", specs: [IndexSpec(path: "id", type: .string)])
        _ = try store.upsert(soup: "things", entries: #"[{"id":"a","v":1},{"id":"b","v":2}]"#, externalIdPath: "id")
    }

    override func tearDown() {
        try? store.close()
        removeTestDirectory(dir)
    }

    private func write<T>(_ body: (SoupTransaction) throws -> T) throws -> T {
        try store.withWriteTransaction { t in try body(try store.soupTransaction(t, "things", keyPath: "id")) }
    }

    func testTheSnapshotSlotTakesTheOldEntryOnceAndRowsDieWithTheirEntry() throws {
        let a = try XCTUnwrap(try write { tx in try tx.entryId(key: .string("a")) })
        try write { tx in
            try tx.attach([Self.copies, Self.uses])
            try tx.side(Self.copies).insert(a, [("copy", .null), ("n", .integer(7))])
        }
        _ = try store.upsert(soup: "things", entries: #"[{"id":"a","v":10}]"#, externalIdPath: "id")
        _ = try store.upsert(soup: "things", entries: #"[{"id":"a","v":20}]"#, externalIdPath: "id")
        let kept = try write { tx in try tx.side(Self.copies).read(a, ["copy", "n"]) }
        XCTAssertEqual(kept?[0].jsonValue?.objectValue?["v"], .int(1))
        XCTAssertEqual(kept?[1], .integer(7))

        try write { tx in try tx.side(Self.uses).insert(a, [("size", .integer(5)), ("at", .next)]) }
        try write { tx in try tx.delete(id: a) }
        try write { tx in
            XCTAssertFalse(try tx.side(Self.copies).contains(a))
            XCTAssertFalse(try tx.side(Self.uses).contains(a))
        }
    }

    func testWriteUpdatesOrInsertsAndTheAggregatesScanInOrder() throws {
        let (a, b) = try write { tx in (try tx.entryId(key: .string("a")) ?? 0, try tx.entryId(key: .string("b")) ?? 0) }
        try write { tx in
            try tx.attach([Self.uses])
            let uses = tx.side(Self.uses)
            try uses.insert(a, [("size", .integer(3)), ("at", .next)])
            try uses.insert(b, [("size", .integer(4)), ("at", .next)])
            XCTAssertTrue(try uses.update(a, [("at", .next)]))  // a is now the most recent
            XCTAssertEqual(try uses.sum("size"), 7)
            XCTAssertEqual(try uses.rows(["size"], orderedBy: ["at", "entry_id"], limit: 10, excluding: nil).map(\.key), [b, a])
            XCTAssertEqual(try uses.rows(["size"], orderedBy: ["at", "entry_id"], limit: 10, excluding: b).map(\.key), [a])
            try uses.write(a, [("size", .integer(9))])
            XCTAssertEqual(try uses.read(a, ["size"]), [.integer(9)])
            XCTAssertThrowsError(try uses.read(a, ["nope"]))
        }
    }

    func testKeyedTablesAndReadTransactions() throws {
        XCTAssertFalse(try store.withReadTransaction { t in try t.keyed(Self.settings).exists() })
        try store.withWriteTransaction { t in
            let rows = t.keyed(Self.settings)
            try rows.create()
            try rows.put(1, [("v", .text("x")), ("w", .text("s"))])
            try rows.put(2, [("v", .text("y")), ("w", .text("s"))])
            try rows.delete(2, matching: [("v", .text("other"))])  // not matching: kept
        }
        try store.withReadTransaction { t in
            let rows = t.keyed(Self.settings)
            XCTAssertEqual(try rows.get(1, ["v"]), [.text("x")])
            XCTAssertEqual(try rows.rows(["v"], whereAnyOf: [("k", .integer(2)), ("v", .text("x"))]).map(\.key), [1, 2])
            XCTAssertThrowsError(try rows.put(3, [("v", .text("z")), ("w", .text("s"))]))
            XCTAssertThrowsError(try store.soupTransaction(t, "things", keyPath: nil).side(Self.copies).delete(1))
        }
    }

    func testAReservedSoupIsRefusedToTheApp() throws {
        store.reserveEngineSoup("test_engine_soup", owner: "the test engine")
        XCTAssertThrowsError(try store.registerSoup("test_engine_soup", specs: [IndexSpec(path: "id", type: .string)])) { e in
            XCTAssertEqual((e as? TureenError)?.message,
                           "soup 'test_engine_soup' belongs to the test engine: it can be read, but not registered by the app")
        }
        XCTAssertNoThrow(try store.registerEngineSoup("test_engine_soup", specs: [IndexSpec(path: "id", type: .string)]))
    }
}
