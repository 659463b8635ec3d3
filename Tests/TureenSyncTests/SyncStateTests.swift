import XCTest
@testable import TureenStore
@testable import TureenSync
@testable import TureenCore

/// The state a sync keeps (tureen_sync_status), syncs defined without
/// running, resync and cleanGhosts, and the target's registration.
final class SyncStateTests: SyncTestCase {
    func testTheStateDescribesTheRun() throws {
        for i in 0..<3 { server.put(#"{"id":"t\#(i)"}"#) }
        _ = try down(#"{"name":"d"}"#)
        let s = try status("d")
        XCTAssertEqual(s["type"], .string("syncDown"))
        XCTAssertEqual(s["name"], .string("d"))
        XCTAssertEqual(s["soupName"], .string(soup))
        XCTAssertEqual(s["target"]?["name"], .string("fake"))
        XCTAssertEqual(s["options"]?["mergeMode"], .string("OVERWRITE"))
        XCTAssertEqual(s["status"], .string("DONE"))
        XCTAssertEqual(s["progress"], .int(100))
        XCTAssertEqual(s["done"], .int(3))
        XCTAssertEqual(s["error"], .null)
        let start = try XCTUnwrap(s["startTime"]?.int64Value), end = try XCTUnwrap(s["endTime"]?.int64Value)
        XCTAssertLessThanOrEqual(start, end)
        XCTAssertEqual(s["maxTimeStamp"]?.int64Value, server.records.values.map(server.stamp).max())
    }

    func testTheStatusByIdIsTheStatusByName() throws {
        let r = try down(#"{"name":"d"}"#)
        let id = try XCTUnwrap(r.int("_soupEntryId"))
        XCTAssertEqual(try status(String(id)), try status("d"))
    }

    func testTotalSizeIsUnknownUntilTheLastPageWithoutTheServersCount() throws {
        for i in 0..<25 { server.put(#"{"id":"t\#(i)"}"#) }
        var sizes: [Int64] = []
        let r = try down(progress: { sizes.append((try? JSONParser.parse($0))?["totalSize"]?.int64Value ?? -2) })
        // The report as the run starts, then one per page.
        XCTAssertEqual(sizes, [-1, -1, -1, 25, 25])
        XCTAssertEqual(r.int("totalSize"), 25)
    }

    func testTotalSizeIsTheServersCountFromTheFirstPage() throws {
        for i in 0..<25 { server.put(#"{"id":"t\#(i)"}"#) }
        server.reportsTotal = true
        var sizes: [Int64] = []
        _ = try down(progress: { sizes.append((try? JSONParser.parse($0))?["totalSize"]?.int64Value ?? -2) })
        XCTAssertEqual(sizes, [-1, 25, 25, 25, 25])
    }

    func testASyncDefinedWithoutStartingIsNewUntilResynced() throws {
        server.put(#"{"id":"a"}"#)
        let r = try down(#"{"name":"d","start":false}"#)
        XCTAssertEqual(r.status, "NEW")
        XCTAssertEqual(r.int("maxTimeStamp"), -1)
        XCTAssertTrue(server.calls.isEmpty)
        XCTAssertEqual(try resync("d").status, "DONE")
        XCTAssertEqual(try local().count, 1)
    }

    func testAFailedSyncDownIsFinishedByAResync() throws {
        for i in 0..<25 { server.put(#"{"id":"t\#(i)"}"#) }
        server.fail(.fetch, nil, .refuse(.http, "bad gateway"))
        let failed = try down(#"{"name":"d"}"#)
        XCTAssertEqual(failed.status, "FAILED")
        XCTAssertEqual(try local().count, 10)
        // A callback feed is in no known order: no position until it has ended.
        XCTAssertEqual(failed.int("maxTimeStamp"), -1)
        XCTAssertEqual(try resync("d").status, "DONE")
        XCTAssertEqual(server.requests(.fetch)[2]["since"], .null)
        XCTAssertEqual(try local().count, 25)
    }

    func testCleanGhostsRemovesWhatTheServerNoLongerHasButNotLocalChanges() throws {
        for id in ["a", "b", "c"] { server.put(#"{"id":"\#(id)"}"#) }
        _ = try down(#"{"name":"d"}"#)
        server.purge("b")
        server.purge("c")
        try localUpsert(#"{"id":"c","v":"edited"}"#)
        XCTAssertEqual(try manager.cleanGhosts("d"), 1)
        XCTAssertEqual(Set(try local().keys), ["a", "c"])
    }

    func testCleanGhostsTakesOnlyASyncDown() throws {
        _ = try up(#"{"name":"u"}"#)
        XCTAssertThrowsError(try manager.cleanGhosts("u")) { XCTAssertEqual(($0 as? TureenError)?.code, .invalid) }
    }

    func testUnknownSyncsSoupsAndTargetsAreNotFound() throws {
        XCTAssertThrowsError(try manager.resync("nope", progress: nil)) { XCTAssertEqual(($0 as? TureenError)?.code, .notFound) }
        XCTAssertThrowsError(try manager.syncDown(target: try TargetSpec.parse(target), soup: "nosoup", options: SyncOptions(), progress: nil)) {
            XCTAssertEqual(($0 as? TureenError)?.code, .notFound)
        }
        XCTAssertThrowsError(try down(target: #"{"type":"callback","name":"nobody"}"#)) {
            XCTAssertEqual(($0 as? TureenError)?.code, .notFound)
        }
    }

    func testUnregisteringReleasesTheTargetOnce() throws {
        try manager.unregisterTarget("fake")
        XCTAssertEqual(server.releases, 1)
        XCTAssertThrowsError(try down()) { XCTAssertEqual(($0 as? TureenError)?.code, .notFound) }
        XCTAssertThrowsError(try manager.unregisterTarget("fake")) { XCTAssertEqual(($0 as? TureenError)?.code, .notFound) }
        XCTAssertEqual(server.releases, 1)
    }

    func testRegisteringANameAgainReplacesTheTarget() throws {
        let other = FakeServer()
        other.put(#"{"id":"elsewhere"}"#)
        _ = try other.register(on: manager)
        XCTAssertEqual(server.releases, 1)
        _ = try down()
        XCTAssertEqual(Set(try local().keys), ["elsewhere"])
        XCTAssertTrue(server.calls.isEmpty)
    }
}
