import XCTest
@testable import TureenStore
@testable import TureenSync
@testable import TureenCore

/// Writes the server committed whose answer never came: no duplicate, no
/// lost write, whether the call is retried in the same run or the run ends
/// (here by a cancel, as an app killed with the request out) and a resync
/// sends it again.
final class LostAnswerTests: SyncTestCase {
    /// Ends the sync "u" as the next call of `op` arrives, after it.
    private func endRunAfterNext(_ op: FakeServer.Operation) {
        server.onCall = { [manager] called, _ in
            if called == op { try? manager?.cancel("u") }
        }
    }

    func testALostCreateRetriedInTheRunMakesOneRecord() throws {
        try localUpsert(#"{"id":"n","v":1}"#)
        server.fail(.create, .lostAnswer)
        let r = try up()
        XCTAssertEqual(r.status, "DONE")
        XCTAssertEqual(server.requests(.create).count, 2)
        XCTAssertEqual(server.records.count, 1)
        XCTAssertEqual(appFields(try entry("n")), server.records["n"])
        XCTAssertTrue(isClean(try entry("n")))
    }

    func testALostUpdateRetriedInTheRunCountsAsDone() throws {
        server.put(#"{"id":"r","v":1}"#)
        _ = try down()
        try localUpsert(#"{"id":"r","v":2}"#)
        server.fail(.update, .lostAnswer)
        let r = try up(#"{"mergeMode":"LEAVE_IF_CHANGED"}"#)
        XCTAssertEqual(r.status, "DONE")
        XCTAssertEqual(r.int("conflicts"), 0)
        XCTAssertEqual(server.records["r"]?["v"], .int(2))
        XCTAssertTrue(isClean(try entry("r")))
    }

    func testALostDeleteRetriedInTheRunCountsAsDone() throws {
        server.put(#"{"id":"r"}"#)
        _ = try down()
        try localDelete("r")
        server.fail(.remove, .lostAnswer)
        XCTAssertEqual(try up().status, "DONE")
        XCTAssertNil(server.records["r"])
        XCTAssertNil(try local()["r"])
    }

    func testALostCreateSentAgainByAResyncMakesNoDuplicate() throws {
        let id = try XCTUnwrap(try localUpsert(#"{"v":1}"#).first?["id"]?.stringValue)
        server.fail(.create, .lostAnswer)
        endRunAfterNext(.create)
        let first = try up(#"{"name":"u"}"#)
        XCTAssertEqual(first.status, "STOPPED")
        XCTAssertEqual(server.records.count, 1)  // applied, unanswered
        XCTAssertEqual(try entry(id)[LocalFlags.created], .bool(true))
        server.onCall = nil
        let again = try resync("u")
        XCTAssertEqual(again.status, "DONE")
        XCTAssertEqual(Set(server.records.keys), [id])
        XCTAssertTrue(isClean(try entry(id)))
    }

    func testAnEditAfterALostCreateGoesOnTopOfIt() throws {
        try localUpsert(#"{"id":"n","v":1}"#)
        server.fail(.create, .lostAnswer)
        endRunAfterNext(.create)
        XCTAssertEqual(try up(#"{"name":"u","mergeMode":"LEAVE_IF_CHANGED"}"#).status, "STOPPED")
        server.onCall = nil
        try localUpsert(#"{"id":"n","v":2}"#)
        let r = try resync("u")
        XCTAssertEqual(r.status, "DONE")
        XCTAssertEqual(r.int("conflicts"), 0)
        XCTAssertEqual(server.records.count, 1)
        XCTAssertEqual(server.records["n"]?["v"], .int(2))
    }

    func testSyncDownTakesALostUpdatesCopyAsTheBaseNotAsAConflict() throws {
        server.put(#"{"id":"r","v":1}"#)
        _ = try down(#"{"name":"d","mergeMode":"LEAVE_IF_CHANGED"}"#)
        try localUpsert(#"{"id":"r","v":2}"#)
        server.fail(.update, .lostAnswer)
        endRunAfterNext(.update)
        XCTAssertEqual(try up(#"{"name":"u","mergeMode":"LEAVE_IF_CHANGED"}"#).status, "STOPPED")
        server.onCall = nil
        try localUpsert(#"{"id":"r","v":3}"#)
        // The server's v2 is this store's own write coming back.
        let d = try resync("d")
        XCTAssertEqual(d.int("conflicts"), 0)
        XCTAssertEqual(try entry("r")["v"], .int(3))
        let u = try resync("u")
        XCTAssertEqual(u.status, "DONE")
        XCTAssertEqual(u.int("conflicts"), 0)
        XCTAssertEqual(server.records["r"]?["v"], .int(3))
        XCTAssertTrue(try conflicts().isEmpty)
    }

    /// "r" = 1 synced down (by sync `downName`), edited to 2 here, and
    /// sent in OVERWRITE by sync "u", which the server commits and whose
    /// answer is lost, the run ending there.
    private func loseAnOverwrite(down downName: String? = nil) throws {
        server.put(#"{"id":"r","v":1}"#)
        _ = try down(downName.map { #"{"name":"\#($0)"}"# })
        try localUpsert(#"{"id":"r","v":2}"#)
        server.fail(.update, .lostAnswer)
        endRunAfterNext(.update)
        XCTAssertEqual(try up(#"{"name":"u","mergeMode":"OVERWRITE"}"#).status, "STOPPED")
        server.onCall = nil
        XCTAssertEqual(server.records["r"]?["v"], .int(2))  // applied, unanswered
    }

    /// OVERWRITE's copy committed, its answer lost, then another device's
    /// write: sent again unchanged, the copy goes under its base's
    /// precondition, and the later write stays, as a conflict here.
    func testAnOverwriteSentAgainAfterALostAnswerDoesNotUndoALaterWrite() throws {
        try loseAnOverwrite()
        server.put(#"{"id":"r","v":5}"#)
        let r = try resync("u")
        XCTAssertEqual(r.int("conflicts"), 1)
        XCTAssertEqual(server.records["r"]?["v"], .int(5))
        XCTAssertEqual(try conflicts().count, 1)
        XCTAssertEqual(try entry("r")["v"], .int(2))
    }

    /// Another device writes the base's fields again over a write that
    /// landed unanswered (in the proof run: a conflict resolved "yours"
    /// sending its copy again). Sync down takes it for the copy the change
    /// was made from; it used to take its stamp as the base's too, so the
    /// next sync up's precondition held and the lost write went over it again.
    func testAWriteOfTheBaseMadeOverALostOneIsNotOverwrittenBlindly() throws {
        try loseAnOverwrite(down: "d")
        server.put(#"{"id":"r","v":1}"#)  // written over it: the base's fields, a later stamp
        XCTAssertEqual(try resync("d").status, "DONE")
        XCTAssertEqual(try entry("r")["v"], .int(2), "the local change stays")
        let r = try resync("u")
        XCTAssertEqual(r.int("conflicts"), 1)
        XCTAssertEqual(server.records["r"]?["v"], .int(1), "the later write stays")
        XCTAssertEqual(try conflicts().count, 1)
    }

    /// The same as the first, but edited here after the lost send: a new
    /// write, which OVERWRITE puts over the other device's.
    func testAnOverwriteEditedAfterALostAnswerStillOverwrites() throws {
        try loseAnOverwrite()
        server.put(#"{"id":"r","v":5}"#)
        try localUpsert(#"{"id":"r","v":3}"#)
        let r = try resync("u")
        XCTAssertEqual(r.status, "DONE")
        XCTAssertEqual(r.int("conflicts"), 0)
        XCTAssertEqual(server.records["r"]?["v"], .int(3))
        XCTAssertTrue(isClean(try entry("r")))
    }
}
