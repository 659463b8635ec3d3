import XCTest
@testable import TureenStore
@testable import TureenSync
@testable import TureenCore

/// A change the server refuses fails alone, keeps its flags with the
/// error, and waits for the next run or the app (resolveError).
final class RecordErrorTests: SyncTestCase {
    /// Three creates, the second refused.
    private func refuseTheSecond() throws -> SyncOutcome {
        try localUpsert(#"[{"id":"r0"},{"id":"r1"},{"id":"r2"}]"#)
        server.fail(.create, nil, .refuse(.http, "quota exceeded for r1"))
        return try up(#"{"name":"u"}"#)
    }

    func testARefusedRecordFailsAloneAndTheOthersGo() throws {
        let r = try refuseTheSecond()
        XCTAssertEqual(r.status, "FAILED")
        XCTAssertEqual(r.error?.code, .http)
        XCTAssertEqual(r.int("synced"), 2)
        XCTAssertEqual(r.int("failed"), 1)
        XCTAssertEqual(r.ids("failedIds"), [try entryId("r1")])
        XCTAssertEqual(Set(server.records.keys), ["r0", "r2"])
        XCTAssertTrue(isClean(try entry("r0")))
        XCTAssertTrue(isClean(try entry("r2")))
    }

    func testTheRefusedEntryKeepsItsFlagsAndTheError() throws {
        _ = try refuseTheSecond()
        let e = try entry("r1")
        XCTAssertEqual(e[LocalFlags.local], .bool(true))
        XCTAssertEqual(e[LocalFlags.created], .bool(true))
        XCTAssertTrue(e[LocalFlags.lastError]?.stringValue?.contains("quota exceeded") ?? false)
        XCTAssertEqual(e[LocalFlags.lastErrorOperation], .string("create"))
        XCTAssertEqual(e[LocalFlags.attempts], .int(1))
    }

    func testTheStateListsTheRecordError() throws {
        let r = try refuseTheSecond()
        let errors = try XCTUnwrap(r.state["recordErrors"]?.arrayValue)
        XCTAssertEqual(errors.count, 1)
        XCTAssertEqual(errors[0]["id"], .string("r1"))
        XCTAssertEqual(errors[0]["operation"], .string("create"))
        XCTAssertEqual(errors[0]["status"], .string("HTTP"))
        XCTAssertEqual(errors[0]["entryId"]?.int64Value, try entryId("r1"))
        XCTAssertTrue(errors[0]["error"]?.stringValue?.contains("quota") ?? false)
    }

    func testTheNextRunSendsItAgainAndClearsTheError() throws {
        _ = try refuseTheSecond()
        let r = try resync("u")
        XCTAssertEqual(r.status, "DONE")
        XCTAssertEqual(r.int("synced"), 1)
        XCTAssertEqual(Set(server.records.keys), ["r0", "r1", "r2"])
        let e = try entry("r1")
        XCTAssertTrue(isClean(e))
        XCTAssertNil(e[LocalFlags.lastError])
        XCTAssertNil(e[LocalFlags.attempts])
    }

    func testPastMaxAttemptsTheChangeWaitsForTheApp() throws {
        try localUpsert(#"{"id":"r1"}"#)
        server.fail(.create, .refuse(.http, "no"))
        XCTAssertEqual(try up(#"{"name":"u","maxAttempts":1}"#).int("failed"), 1)
        let r = try resync("u")
        XCTAssertEqual(server.requests(.create).count, 1)  // not sent again
        XCTAssertEqual(r.int("failed"), 1)
        try manager.resolveError(soup: soup, entryId: try entryId("r1"), action: .retry)
        XCTAssertEqual(try resync("u").status, "DONE")
        XCTAssertEqual(server.requests(.create).count, 2)
        XCTAssertNotNil(server.records["r1"])
    }

    func testRollbackPutsTheServersCopyBack() throws {
        server.put(#"{"id":"a","v":1}"#)
        _ = try down()
        try localUpsert(#"{"id":"a","v":2}"#)
        server.fail(.update, .refuse(.invalid, "v must stay 1"))
        XCTAssertEqual(try up().int("failed"), 1)
        try manager.resolveError(soup: soup, entryId: try entryId("a"), action: .rollback)
        let e = try entry("a")
        XCTAssertEqual(e["v"], .int(1))
        XCTAssertTrue(isClean(e))
    }

    func testResolvingAnEntryWithoutAnErrorIsNotFound() throws {
        try localUpsert(#"{"id":"a"}"#)
        XCTAssertThrowsError(try manager.resolveError(soup: soup, entryId: try entryId("a"), action: .retry)) {
            XCTAssertEqual(($0 as? TureenError)?.code, .notFound)
        }
    }
}
