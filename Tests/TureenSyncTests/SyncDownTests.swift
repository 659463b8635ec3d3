import XCTest
@testable import TureenStore
@testable import TureenSync
@testable import TureenCore

final class SyncDownTests: SyncTestCase {
    func testFillsAnEmptySoupWithCleanCopiesOfTheServersRecords() throws {
        for i in 0..<5 { server.put(#"{"id":"r\#(i)","n":\#(i)}"#) }
        let r = try down()
        XCTAssertNil(r.error)
        XCTAssertEqual(r.status, "DONE")
        XCTAssertEqual(r.int("done"), 5)
        XCTAssertEqual(r.int("progress"), 100)
        let local = try local()
        XCTAssertEqual(Set(local.keys), Set(server.records.keys))
        for (id, e) in local {
            XCTAssertEqual(appFields(e), server.records[id], id)
            XCTAssertTrue(isClean(e), id)
        }
    }

    func testFirstRunAsksForEverythingFromNoPosition() throws {
        server.put(#"{"id":"a"}"#)
        _ = try down()
        let first = try XCTUnwrap(server.requests(.fetch).first)
        XCTAssertEqual(first["since"], .null)
        XCTAssertEqual(first["cursor"], .null)
    }

    func testMaxTimeStampIsTheHighestStampReceived() throws {
        server.put(#"{"id":"a"}"#)
        let b = server.put(#"{"id":"b"}"#)
        XCTAssertEqual(try down().int("maxTimeStamp"), server.stamp(b))
    }

    func testResyncAsksFromItsPositionAndAppliesOnlyWhatChanged() throws {
        for i in 0..<4 { server.put(#"{"id":"r\#(i)","n":\#(i)}"#) }
        let first = try down(#"{"name":"d"}"#)
        let position = try XCTUnwrap(first.int("maxTimeStamp"))
        server.patch("r1", #"{"n":100}"#)
        server.put(#"{"id":"new","n":5}"#)
        let r = try resync("d")
        XCTAssertEqual(r.status, "DONE")
        let since = try XCTUnwrap(server.requests(.fetch).last?["since"]?.int64Value)
        XCTAssertLessThanOrEqual(since, position)
        XCTAssertGreaterThan(since, position - 1000)
        // Records at the position may come again, but are not counted.
        XCTAssertEqual(r.int("done"), 2)
        XCTAssertEqual(try entry("r1")["n"], .int(100))
        XCTAssertEqual(try entry("new")["n"], .int(5))
        XCTAssertEqual(try local().count, 5)
    }

    func testAChangedRecordUpdatesItsEntryInPlace() throws {
        server.put(#"{"id":"a","v":1}"#)
        _ = try down(#"{"name":"d"}"#)
        let before = try entryId("a")
        server.patch("a", #"{"v":2}"#)
        _ = try resync("d")
        XCTAssertEqual(try entryId("a"), before)
        XCTAssertEqual(try entry("a")["v"], .int(2))
        XCTAssertEqual(try local().count, 1)
    }

    func testReadsEveryPageInOrder() throws {
        for i in 0..<25 { server.put(#"{"id":"t\#(i)"}"#) }
        let r = try down()
        XCTAssertEqual(r.int("done"), 25)
        XCTAssertEqual(server.requests(.fetch).map { $0["cursor"] }, [.null, .string("page-10"), .string("page-20")])
        XCTAssertEqual(try local().count, 25)
    }

    func testProgressIsReportedPerPageAndEndsDone() throws {
        for i in 0..<25 { server.put(#"{"id":"t\#(i)"}"#) }
        var seen: [JSON] = []
        _ = try down(progress: { seen.append((try? JSONParser.parse($0)) ?? .null) })
        let done = seen.compactMap { $0["done"]?.int64Value }
        XCTAssertGreaterThanOrEqual(seen.count, 3)
        XCTAssertEqual(done, done.sorted())
        XCTAssertEqual(seen.last?["status"], .string("DONE"))
        XCTAssertEqual(seen.last?["done"], .int(25))
    }

    func testTotalSizeIsTheServersCountWhenItGivesOne() throws {
        for i in 0..<12 { server.put(#"{"id":"t\#(i)"}"#) }
        server.reportsTotal = true
        XCTAssertEqual(try down().int("totalSize"), 12)
    }

    func testTombstonesDeleteLocalEntries() throws {
        server.put(#"{"id":"keep"}"#)
        server.put(#"{"id":"gone"}"#)
        _ = try down(#"{"name":"d"}"#)
        server.delete("gone")
        let r = try resync("d")
        XCTAssertEqual(r.status, "DONE")
        XCTAssertEqual(Set(try local().keys), ["keep"])
    }

    func testATombstoneOfARecordNeverHeldCreatesNothing() throws {
        server.put(#"{"id":"a"}"#)
        _ = try down(#"{"name":"d"}"#)
        server.put(#"{"id":"brief"}"#)
        server.delete("brief")
        _ = try resync("d")
        XCTAssertEqual(Set(try local().keys), ["a"])
    }

    func testARefusedFetchFailsTheSyncWithTheServersMessage() throws {
        server.put(#"{"id":"a"}"#)
        server.fail(.fetch, .refuse(.http, "the server is on fire"))
        let r = try down()
        XCTAssertEqual(r.status, "FAILED")
        XCTAssertEqual(r.error?.code, .http)
        XCTAssertTrue(r.error?.message.contains("on fire") ?? false, r.error?.message ?? "")
        XCTAssertTrue(r.state["error"]?.stringValue?.contains("on fire") ?? false)
        XCTAssertTrue(try local().isEmpty)
    }

    func testAnUnreachableServerIsAskedAgain() throws {
        server.put(#"{"id":"a"}"#)
        server.fail(.fetch, .unreachable)
        let r = try down()
        XCTAssertEqual(r.status, "DONE")
        XCTAssertEqual(server.requests(.fetch).count, 2)
        XCTAssertEqual(Set(try local().keys), ["a"])
    }

    func testASlowServerIsWaitedFor() throws {
        server.put(#"{"id":"a"}"#)
        server.fail(.fetch, .delay(50))
        XCTAssertEqual(try down().status, "DONE")
        XCTAssertEqual(try local().count, 1)
    }

    func testTheTargetsIdAndModificationFields() throws {
        let other = FakeServer(idField: "uid", modifiedField: "ts")
        let t = try other.register(on: manager, as: "uids")
        try store.registerSoup("by_uid", specs: [IndexSpec(path: "uid", type: .string)])
        let stamped = other.put(#"{"uid":"u1","v":1}"#)
        let r = try SyncOutcome(manager.syncDown(target: try TargetSpec.parse(t), soup: "by_uid", options: SyncOptions(), progress: nil))
        XCTAssertEqual(r.int("maxTimeStamp"), other.stamp(stamped))
        XCTAssertEqual(appFields(try local(idField: "uid", soup: "by_uid")["u1"]), stamped)
    }

    func testANameGivenAgainRunsTheSyncFromItsPosition() throws {
        server.put(#"{"id":"a"}"#)
        _ = try down(#"{"name":"d"}"#)
        _ = try down(#"{"name":"d"}"#)
        let asked = server.requests(.fetch).map { $0["since"] }
        XCTAssertEqual(asked.count, 2)
        XCTAssertEqual(asked[0], .null)
        XCTAssertNotNil(asked[1]?.int64Value)
    }
}
