import XCTest
@testable import TureenStore
@testable import TureenSync
@testable import TureenCore

final class SyncUpTests: SyncTestCase {
    /// Three records on the server, synced down.
    private func seed() throws {
        for id in ["keep", "edit", "drop"] { server.put(#"{"id":"\#(id)","v":1}"#) }
        _ = try down()
    }

    func testCreateSendsTheRecordWithoutBookkeepingAndKeepsTheServersCopy() throws {
        try localUpsert(#"{"id":"n1","v":"new"}"#)
        let r = try up()
        XCTAssertEqual(r.status, "DONE")
        XCTAssertEqual(r.int("synced"), 1)
        let sent = try XCTUnwrap(server.requests(.create).first?["record"]?.objectValue)
        XCTAssertEqual(sent, try object(#"{"id":"n1","v":"new"}"#))
        let e = try entry("n1")
        XCTAssertTrue(isClean(e))
        XCTAssertEqual(appFields(e), server.records["n1"])
    }

    func testACreateWithoutAnIdGetsAClientIdTheServerKeeps() throws {
        let stored = try localUpsert(#"{"v":"anonymous"}"#)
        let id = try XCTUnwrap(stored.first?["id"]?.stringValue)
        XCTAssertEqual(id.count, 36)  // a UUID
        XCTAssertEqual(try up().status, "DONE")
        XCTAssertEqual(server.records[id]?["v"], .string("anonymous"))
        XCTAssertTrue(isClean(try entry(id)))
    }

    func testUpdateSendsTheRecordWithTheBaseItWasMadeAgainst() throws {
        try seed()
        let base = try XCTUnwrap(server.records["edit"])
        try localUpsert(#"{"id":"edit","v":2}"#)
        XCTAssertEqual(try up().status, "DONE")
        let request = try XCTUnwrap(server.requests(.update).first)
        XCTAssertEqual(request["record"]?["v"], .int(2))
        XCTAssertEqual(request["base"]?.objectValue, base)
        XCTAssertEqual(server.records["edit"]?["v"], .int(2))
        XCTAssertTrue(isClean(try entry("edit")))
        XCTAssertEqual(appFields(try entry("edit")), server.records["edit"])
    }

    func testDeleteRemovesTheRecordThereAndTheEntryHere() throws {
        try seed()
        try localDelete("drop")
        XCTAssertEqual(try up().status, "DONE")
        XCTAssertEqual(server.requests(.remove).first?["id"], .string("drop"))
        XCTAssertNil(server.records["drop"])
        XCTAssertNotNil(server.tombstones["drop"])
        XCTAssertEqual(Set(try local().keys), ["keep", "edit"])
    }

    func testCreateUpdateAndDeleteInOneRun() throws {
        try seed()
        try localUpsert(#"{"id":"n","v":0}"#)
        try localUpsert(#"{"id":"edit","v":2}"#)
        try localDelete("drop")
        let r = try up()
        XCTAssertEqual(r.int("synced"), 3)
        XCTAssertEqual(r.int("totalSize"), 3)
        XCTAssertEqual(Set(server.records.keys), ["keep", "edit", "n"])
        XCTAssertEqual(Set(try local().keys), Set(server.records.keys))
        XCTAssertTrue(try local().values.allSatisfy(isClean))
    }

    func testADeleteOfARecordAlreadyGoneThereCountsAsDone() throws {
        try seed()
        server.delete("drop")
        try localDelete("drop")
        let r = try up()
        XCTAssertEqual(r.status, "DONE")
        XCTAssertEqual(r.int("failed"), 0)
        XCTAssertNil(try local()["drop"])
    }

    func testARecordCreatedAndDeletedBeforeAnySyncIsNeverSent() throws {
        try localUpsert(#"{"id":"brief"}"#)
        try localDelete("brief")
        XCTAssertNil(try local()["brief"])
        XCTAssertEqual(try up().status, "DONE")
        XCTAssertTrue(server.calls.isEmpty)
    }

    func testNothingToSendCallsNoOne() throws {
        try seed()
        server.calls.removeAll()
        let r = try up()
        XCTAssertEqual(r.status, "DONE")
        XCTAssertEqual(r.int("totalSize"), 0)
        XCTAssertTrue(server.calls.isEmpty)
    }

    func testFieldlistSendsOnlyThoseFieldsAndTheId() throws {
        try localUpsert(#"{"id":"f","a":1,"b":2,"c":3}"#)
        XCTAssertEqual(try up(#"{"fieldlist":["a","c"]}"#).status, "DONE")
        XCTAssertEqual(server.requests(.create).first?["record"]?.objectValue, try object(#"{"id":"f","a":1,"c":3}"#))
    }

    func testALocalMergeKeepsTheFieldsNotGiven() throws {
        server.put(#"{"id":"m","a":1,"b":1}"#)
        _ = try down()
        try localUpsert(#"{"id":"m","b":2}"#, merge: true)
        XCTAssertEqual(try up().status, "DONE")
        XCTAssertEqual(appFields(server.records["m"], ignoring: ["last_modified"]), try object(#"{"id":"m","a":1,"b":2}"#))
    }

    func testATargetWithoutWriteFunctionsLeavesTheChangeLocal() throws {
        let t = try server.register(on: manager, as: "readonly", writes: false)
        try localUpsert(#"{"id":"r1"}"#)
        let r = try up(target: t)
        XCTAssertEqual(r.status, "FAILED")
        XCTAssertNotNil(r.error)
        XCTAssertEqual(try entry("r1")[LocalFlags.local], .bool(true))
        XCTAssertTrue(server.records.isEmpty)
    }
}
