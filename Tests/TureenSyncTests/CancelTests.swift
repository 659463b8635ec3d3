import XCTest
import Glibc
@testable import TureenStore
@testable import TureenSync
@testable import TureenCore

/// A cancelled sync stops between pages or batches, ends STOPPED with what
/// it committed saved, and a resync finishes it.
final class CancelTests: SyncTestCase {
    /// tureen_sync_cancel from a thread of its own, waited for.
    private func cancelFromAnotherThread(_ name: String) {
        let m = manager
        guard let t = try? ThreadBody.start("cancel a sync", { try? m?.cancel(name) }) else {
            return XCTFail("no thread")
        }
        pthread_join(t, nil)
    }

    func testACancelFromAnotherThreadStopsSyncDownAndAResyncFinishesIt() throws {
        for i in 0..<30 { server.put(#"{"id":"t\#(i)"}"#) }
        server.onCall = { [weak self] _, request in
            if request["cursor"] == .string("page-10") { self?.cancelFromAnotherThread("d") }
        }
        let r = try down(#"{"name":"d"}"#)
        XCTAssertEqual(r.status, "STOPPED")
        XCTAssertEqual(r.error?.code, .cancelled)
        XCTAssertEqual(try status("d")["status"], .string("STOPPED"))
        let kept = try local().count
        XCTAssertGreaterThanOrEqual(kept, 10)
        XCTAssertLessThan(kept, 30)
        server.onCall = nil
        let again = try resync("d")
        XCTAssertEqual(again.status, "DONE")
        XCTAssertEqual(try local().count, 30)
    }

    func testACancelFromAProgressCallbackStopsSyncDown() throws {
        for i in 0..<50 { server.put(#"{"id":"t\#(i)"}"#) }
        var reports = 0
        let r = try down(#"{"name":"d"}"#, progress: { [manager] _ in
            reports += 1
            try? manager?.cancel("d")
        })
        XCTAssertEqual(r.status, "STOPPED")
        XCTAssertLessThan(server.requests(.fetch).count, 5)
        XCTAssertGreaterThanOrEqual(reports, 1)
        XCTAssertEqual(try resync("d").status, "DONE")
        XCTAssertEqual(try local().count, 50)
    }

    func testACancelledSyncUpKeepsWhatWentAndAResyncSendsTheRest() throws {
        try localUpsert(#"[{"id":"a"},{"id":"b"},{"id":"c"}]"#)
        server.onCall = { [manager] op, _ in
            if op == .create { try? manager?.cancel("u") }
        }
        let r = try up(#"{"name":"u"}"#)
        XCTAssertEqual(r.status, "STOPPED")
        XCTAssertEqual(r.int("synced"), 1)
        XCTAssertEqual(server.records.count, 1)
        server.onCall = nil
        XCTAssertEqual(try resync("u").status, "DONE")
        XCTAssertEqual(Set(server.records.keys), ["a", "b", "c"])
        XCTAssertEqual(server.requests(.create).count, 3)
        XCTAssertTrue(try local().values.allSatisfy(isClean))
    }

    func testACancelWhileTheServerIsSlowStopsTheSync() throws {
        for i in 0..<20 { server.put(#"{"id":"t\#(i)"}"#) }
        server.fail(.fetch, .delay(20), .delay(20))
        server.onCall = { [weak self] _, request in
            if request["cursor"] == .null { self?.cancelFromAnotherThread("d") }
        }
        let r = try down(#"{"name":"d"}"#)
        XCTAssertEqual(r.status, "STOPPED")
        XCTAssertEqual(server.requests(.fetch).count, 1)
    }

    func testCancellingASyncThatIsNotRunningDoesNothing() throws {
        server.put(#"{"id":"a"}"#)
        _ = try down(#"{"name":"d"}"#)
        try manager.cancel("d")
        XCTAssertEqual(try status("d")["status"], .string("DONE"))
        XCTAssertEqual(try resync("d").status, "DONE")
    }

    func testCancellingAnUnknownSyncIsNotFound() {
        XCTAssertThrowsError(try manager.cancel("nope")) { XCTAssertEqual(($0 as? TureenError)?.code, .notFound) }
    }
}
