import XCTest
@testable import TureenStore
@testable import TureenSync
@testable import TureenCore

/// Conflicts recorded by sync up (LEAVE_IF_CHANGED) and resolved with
/// the calls tureen_conflicts and tureen_conflict_resolve make.
final class ConflictTests: SyncTestCase {
    /// Record r {"a":1,"b":1} changed on both sides ("a" there, "b" here),
    /// left as a conflict by sync up "u".
    private func conflictOnR() throws -> JSONObject {
        server.put(#"{"id":"r","a":1,"b":1}"#)
        _ = try down()
        server.patch("r", #"{"a":2}"#)
        try localUpsert(#"{"id":"r","a":1,"b":3}"#)
        let r = try up(#"{"name":"u","mergeMode":"LEAVE_IF_CHANGED"}"#)
        XCTAssertEqual(r.ids("conflictIds"), [try entryId("r")])
        return try XCTUnwrap(try conflicts().first)
    }

    func testTheConflictHoldsBaseTheirsYoursAndWhatChanged() throws {
        let c = try conflictOnR()
        XCTAssertEqual(c["entryId"]?.int64Value, try entryId("r"))
        XCTAssertEqual(c["id"], .string("r"))
        XCTAssertEqual(c["base"]?["a"], .int(1))
        XCTAssertEqual(c["theirs"]?.objectValue, server.records["r"])
        XCTAssertEqual(c["yours"]?["b"], .int(3))
        XCTAssertEqual(c["remoteChanges"], .array([.string("a")]))
        XCTAssertEqual(c["localChanges"], .array([.string("b")]))
        XCTAssertEqual(c["conflictingChanges"], .array([]))
    }

    func testResolvingYoursOverwritesTheServerNextRun() throws {
        _ = try conflictOnR()
        try manager.resolveConflict(soup: soup, entryId: try entryId("r"), resolution: try ConflictResolution.parse("yours", merged: nil))
        XCTAssertTrue(try conflicts().isEmpty)
        XCTAssertEqual(try resync("u").status, "DONE")
        XCTAssertEqual(appFields(server.records["r"], ignoring: ["last_modified"]), try object(#"{"id":"r","a":1,"b":3}"#))
    }

    func testResolvingTheirsTakesTheServersCopyAndSendsNothing() throws {
        _ = try conflictOnR()
        let theirs = server.records["r"]
        try manager.resolveConflict(soup: soup, entryId: try entryId("r"), resolution: try ConflictResolution.parse("theirs", merged: nil))
        let e = try entry("r")
        XCTAssertEqual(appFields(e), theirs)
        XCTAssertTrue(isClean(e))
        let updates = server.requests(.update).count
        XCTAssertEqual(try resync("u").status, "DONE")
        XCTAssertEqual(server.requests(.update).count, updates)
    }

    func testResolvingMergedSendsTheMergedRecord() throws {
        _ = try conflictOnR()
        try manager.resolveConflict(soup: soup, entryId: try entryId("r"), resolution: try ConflictResolution.parse("merged", merged: #"{"id":"r","a":2,"b":3}"#))
        XCTAssertEqual(try resync("u").status, "DONE")
        XCTAssertEqual(appFields(server.records["r"], ignoring: ["last_modified"]), try object(#"{"id":"r","a":2,"b":3}"#))
        XCTAssertEqual(appFields(try entry("r")), server.records["r"])
    }

    func testAServerDeletionResolvedTheirsRemovesTheEntry() throws {
        server.put(#"{"id":"r","v":1}"#)
        _ = try down()
        server.delete("r")
        try localUpsert(#"{"id":"r","v":2}"#)
        let r = try up(#"{"mergeMode":"LEAVE_IF_CHANGED"}"#)
        XCTAssertEqual(r.int("conflicts"), 1)
        XCTAssertEqual(try conflicts().first?["theirs"], .null)
        try manager.resolveConflict(soup: soup, entryId: try entryId("r"), resolution: try ConflictResolution.parse("theirs", merged: nil))
        XCTAssertNil(try local()["r"])
    }

    func testResolvingAnEntryWithoutAConflictIsNotFound() throws {
        try localUpsert(#"{"id":"a"}"#)
        XCTAssertThrowsError(try manager.resolveConflict(soup: soup, entryId: try entryId("a"), resolution: try ConflictResolution.parse("yours", merged: nil))) {
            XCTAssertEqual(($0 as? TureenError)?.code, .notFound)
        }
    }

    func testAnUnknownResolutionIsInvalid() throws {
        _ = try conflictOnR()
        XCTAssertThrowsError(try manager.resolveConflict(soup: soup, entryId: try entryId("r"), resolution: try ConflictResolution.parse("mine", merged: nil))) {
            XCTAssertEqual(($0 as? TureenError)?.code, .invalid)
        }
        XCTAssertEqual(try conflicts().count, 1)
    }
}
