import XCTest
@testable import TureenStore
@testable import TureenSync
@testable import TureenCore

/// Named syncs defined once and run again, changed, listed and deleted
/// (SyncManager+Manage), and what sync down leaves of local creates.
final class SyncDefinitionTests: SyncTestCase {
    func testANameGivenAgainWithOtherOptionsIsInvalidAndSaysWhatDiffers() throws {
        _ = try up(#"{"name":"u"}"#)
        XCTAssertThrowsError(try up(#"{"name":"u","mergeMode":"LEAVE_IF_CHANGED"}"#)) {
            XCTAssertEqual(($0 as? TureenError)?.code, .invalid)
            XCTAssertTrue(($0 as? TureenError)?.message.contains("options") ?? false)
        }
    }

    func testASyncUpCannotTakeTheNameOfASyncDown() throws {
        _ = try down(#"{"name":"s"}"#)
        XCTAssertThrowsError(try up(#"{"name":"s"}"#)) { XCTAssertEqual(($0 as? TureenError)?.code, .invalid) }
    }

    func testListHoldsEverySyncInIdOrder() throws {
        _ = try down(#"{"name":"d"}"#)
        _ = try up(#"{"name":"u"}"#)
        let names = (try JSONParser.parse(try manager.list()).arrayValue ?? []).map { $0["name"] }
        XCTAssertEqual(names, [.string("d"), .string("u")])
    }

    func testUpdatingTheOptionsChangesHowTheNextRunMerges() throws {
        server.put(#"{"id":"r","v":1}"#)
        _ = try down(#"{"name":"d"}"#)
        let updated = try JSONParser.parse(try manager.update("d", target: nil, options: try SyncOptions.parse(#"{"mergeMode":"LEAVE_IF_CHANGED"}"#)))
        XCTAssertEqual(updated["options"]?["mergeMode"], .string("LEAVE_IF_CHANGED"))
        XCTAssertEqual(updated["name"], .string("d"))
        try localUpsert(#"{"id":"r","v":"mine"}"#)
        server.patch("r", #"{"v":"theirs"}"#)
        _ = try resync("d")
        XCTAssertEqual(try entry("r")["v"], .string("mine"))
    }

    func testADeletedSyncIsGoneButItsRecordsStay() throws {
        server.put(#"{"id":"a"}"#)
        _ = try down(#"{"name":"d"}"#)
        try manager.delete("d")
        XCTAssertThrowsError(try manager.status("d")) { XCTAssertEqual(($0 as? TureenError)?.code, .notFound) }
        XCTAssertEqual(Set(try local().keys), ["a"])
    }

    func testSyncDownLeavesALocalCreateAlone() throws {
        server.put(#"{"id":"theirs"}"#)
        try localUpsert(#"{"id":"mine","v":1}"#)
        XCTAssertEqual(try down().status, "DONE")
        XCTAssertEqual(Set(try local().keys), ["theirs", "mine"])
        XCTAssertEqual(try entry("mine")[LocalFlags.created], .bool(true))
    }
}
