import XCTest
@testable import TureenStore
@testable import TureenSync
@testable import TureenCore

/// SmartSync's flags in each entry (Up/LocalFlags.swift): set by local
/// writes, cleared by a sync that sent the change.
final class LocalFlagTests: SyncTestCase {
    private func flags(_ id: String) throws -> [String: JSON] {
        let e = try entry(id)
        var out: [String: JSON] = [:]
        for f in LocalFlags.all { out[f] = e[f] ?? .null }
        return out
    }

    func testALocalCreateIsLocalAndCreated() throws {
        try localUpsert(#"{"id":"a"}"#)
        XCTAssertEqual(try flags("a"), [LocalFlags.local: .bool(true), LocalFlags.created: .bool(true),
                                         LocalFlags.updated: .bool(false), LocalFlags.deleted: .bool(false)])
    }

    func testALocalEditOfASyncedRecordIsUpdated() throws {
        server.put(#"{"id":"a","v":1}"#)
        _ = try down()
        XCTAssertTrue(isClean(try entry("a")))
        try localUpsert(#"{"id":"a","v":2}"#)
        let f = try flags("a")
        XCTAssertEqual(f[LocalFlags.local], .bool(true))
        XCTAssertEqual(f[LocalFlags.updated], .bool(true))
        XCTAssertEqual(f[LocalFlags.created], .bool(false))
    }

    func testAnEditOfAnUnsentCreateStaysCreated() throws {
        try localUpsert(#"{"id":"a","v":1}"#)
        try localUpsert(#"{"id":"a","v":2}"#)
        XCTAssertEqual(try flags("a")[LocalFlags.created], .bool(true))
        XCTAssertEqual(try up().status, "DONE")
        XCTAssertEqual(server.requests(.create).count, 1)
        XCTAssertTrue(server.requests(.update).isEmpty)
    }

    func testALocalDeleteKeepsTheEntryMarkedUntilSyncUp() throws {
        server.put(#"{"id":"a"}"#)
        _ = try down()
        try localDelete("a")
        let f = try flags("a")
        XCTAssertEqual(f[LocalFlags.local], .bool(true))
        XCTAssertEqual(f[LocalFlags.deleted], .bool(true))
    }

    func testSyncUpClearsTheFlags() throws {
        try localUpsert(#"{"id":"a"}"#)
        _ = try up()
        XCTAssertTrue(isClean(try entry("a")))
    }
}
