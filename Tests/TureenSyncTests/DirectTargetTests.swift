import XCTest
@testable import TureenStore
@testable import TureenSync
@testable import TureenCore

/// The engine's own target protocol (Targets/SyncTarget.swift) over a
/// FakeServer, for what a callback target cannot say: a feed sorted by
/// stamp (the position saved with every page), batches of several changes,
/// and a record's tombstone looked up. Kept to this file: the protocol is
/// being split into capabilities.
final class DirectTarget: SyncTarget {
    let server: FakeServer
    let batchSize: Int
    private(set) var requestCount = 0
    /// How many changes each push carried.
    private(set) var batches: [Int] = []
    /// The next push is applied, then its answer is lost.
    var losesNextAnswer = false
    /// Runs once the lost answer's changes are applied, before the error:
    /// another device's write.
    var meanwhile: (() -> Void)?
    /// How many times the pusher may send changes again after a lost
    /// answer (RestTarget: its network retries); the error says the
    /// request may have been applied, as RetryingSender's does.
    var resends = 0

    init(_ server: FakeServer, batchSize: Int = 1) {
        self.server = server
        self.batchSize = batchSize
    }

    var idField: String { server.idField }
    var modifiedField: String { server.modifiedField }
    var sortedByModification: Bool { true }  // FakeServer's feed is in stamp order
    var fetchesOnAnyThread: Bool { false }
    func abandon() {}

    func fetch(since position: FeedPosition?, next: JSON?) throws -> FetchPage {
        let since = try FeedPosition.stamp(of: position)
        let request = JSONObject([("since", since.map { .int($0.ms) } ?? .null), ("cursor", next ?? .null)])
        let body = try answer(.fetch, request)
        let records = (body["records"]?.arrayValue ?? []).compactMap { $0.objectValue }
        let cursor = body["cursor"].flatMap { $0 == .null ? nil : $0 }
        return FetchPage(records: records, next: cursor, total: body["total"]?.int64Value.map { Int($0) })
    }

    func push(_ changes: [Change]) throws -> [PushOutcome] {
        batches.append(changes.count)
        let outcomes = changes.map { c -> PushOutcome in
            var request = JSONObject([("ifMatch", c.ifMatch.map { .string($0) } ?? .null)])
            let op: FakeServer.Operation
            switch c.kind {
            case .create: op = .create; request["record"] = .object(c.record)
            case .update: op = .update; request["record"] = .object(c.record)
            case .delete: op = .remove; request["id"] = .string(c.id)
            }
            let (status, text) = server.answer(op, JSON.object(request).text)
            let record = text.flatMap { try? JSONParser.parse($0) }?["record"]?.objectValue
            switch TureenCode(rawValue: status) {
            case nil: return .applied(record)
            case .conflict?: return .conflict(record, known: true)
            case .notFound?: return .notFound
            case let code?: return .rejected(TureenError(code, "refused"))
            }
        }
        if losesNextAnswer {
            losesNextAnswer = false
            meanwhile?()
            var lost = TureenError(.network, "the connection dropped after the server's commit")
            lost.mayHaveApplied = true
            throw lost
        }
        return outcomes
    }

    func pauseBeforeResend(attempt: Int) throws -> Bool { attempt < resends }

    func get(id: String) throws -> JSONObject? { server.records[id] }

    func lookUp(id: String) throws -> ServerRecord {
        if let live = server.records[id] { return .live(live) }
        return server.tombstones[id] == nil ? .none : .deleted
    }

    func version(of base: JSONObject) -> String? { base[modifiedField]?.int64Value.map { String($0) } }

    func isTombstone(_ record: JSONObject) -> Bool { record["deleted"] == .bool(true) }

    private func answer(_ op: FakeServer.Operation, _ request: JSONObject) throws -> JSON {
        requestCount += 1
        let (status, text) = server.answer(op, JSON.object(request).text)
        let body = try text.map { try JSONParser.parse($0) } ?? .null
        guard status == 0 else { throw TureenError(TureenCode(rawValue: status) ?? .internal, body["error"]?.stringValue ?? "refused") }
        return body
    }
}

final class DirectTargetTests: SyncTestCase {
    /// Runs sync `name` (defined through the manager) once over `direct`,
    /// saving its end as the manager does.
    private func run(_ name: String, over direct: DirectTarget) throws -> SyncOutcome {
        let state = try manager.load(name)
        let run = SyncRun(store: store, state: state, target: direct, cancel: CancelFlag(), progress: nil)
        let result = run.finish(end: { s in
            try store.withWriteTransaction(origin: .sync) { c in
                _ = try store.soupTransaction(c, SyncState.soup, keyPath: nil).save(s.object)
            }
        }) {
            switch state.kind {
            case .down: try run.down(incremental: state.maxTimeStamp >= 0)
            case .up: try run.up()
            }
        }
        return try SyncOutcome(result)
    }

    func testASortedFeedSavesItsPositionWithEveryPage() throws {
        for i in 0..<25 { server.put(#"{"id":"t\#(i)"}"#) }
        _ = try down(#"{"name":"d","start":false}"#)
        server.fail(.fetch, nil, nil, .refuse(.http, "page three is lost"))
        let failed = try run("d", over: DirectTarget(server))
        XCTAssertEqual(failed.status, "FAILED")
        let lastOfPageTwo = server.records.values.map(server.stamp).sorted()[19]
        XCTAssertEqual(failed.int("maxTimeStamp"), lastOfPageTwo)
        XCTAssertEqual(try local().count, 20)
        let again = try run("d", over: DirectTarget(server))
        XCTAssertEqual(again.status, "DONE")
        XCTAssertEqual(server.requests(.fetch).last?["since"]?.int64Value, lastOfPageTwo)
        XCTAssertEqual(try local().count, 25)
    }

    func testChangesGoInBatchesOfTheTargetsSize() throws {
        try localUpsert("[" + (0..<7).map { #"{"id":"n\#($0)"}"# }.joined(separator: ",") + "]")
        _ = try up(#"{"name":"u","start":false}"#)
        let direct = DirectTarget(server, batchSize: 3)
        let r = try run("u", over: direct)
        XCTAssertEqual(r.status, "DONE")
        XCTAssertEqual(r.int("synced"), 7)
        XCTAssertEqual(direct.batches, [3, 3, 1])
        XCTAssertEqual(server.records.count, 7)
    }

    func testALostCreateDeletedSinceOnTheServerStaysDeleted() throws {
        let id = try XCTUnwrap(try localUpsert(#"{"v":1}"#).first?["id"]?.stringValue)
        _ = try up(#"{"name":"u","start":false}"#)
        let direct = DirectTarget(server)
        direct.losesNextAnswer = true
        XCTAssertEqual(try run("u", over: direct).status, "FAILED")
        XCTAssertNotNil(server.records[id])
        server.delete(id)  // another device deleted what this one created
        let r = try run("u", over: DirectTarget(server))
        XCTAssertEqual(r.status, "DONE")
        XCTAssertNil(server.records[id], "not brought back")
        XCTAssertNil(try local()[id], "the deletion reaches this store")
        XCTAssertEqual(server.requests(.create).count, 1)
    }

    /// Sends "r" = 2 in OVERWRITE over a server holding "r" = 1, the answer
    /// lost after the commit and `meanwhile` run; the pusher sends it again
    /// in the same run.
    private func overwriteWithLostAnswer(meanwhile: (() -> Void)?) throws -> SyncOutcome {
        server.put(#"{"id":"r","v":1}"#)
        _ = try down()
        try localUpsert(#"{"id":"r","v":2}"#)
        _ = try up(#"{"name":"u","mergeMode":"OVERWRITE","start":false}"#)
        let direct = DirectTarget(server)
        direct.losesNextAnswer = true
        direct.meanwhile = meanwhile
        direct.resends = 1
        return try run("u", over: direct)
    }

    func testAWriteSentAgainInTheRunAfterALostAnswerDoesNotUndoALaterOne() throws {
        let r = try overwriteWithLostAnswer(meanwhile: { [server] in server?.put(#"{"id":"r","v":5}"#) })
        XCTAssertEqual(r.int("conflicts"), 1)
        XCTAssertEqual(server.records["r"]?["v"], .int(5), "the other device's write stays")
        XCTAssertEqual(try conflicts().count, 1)
        XCTAssertEqual(try entry("r")["v"], .int(2))
        // Sent first without a precondition (OVERWRITE), again under its base's.
        XCTAssertEqual(server.requests(.update).map { $0["ifMatch"] == .null }, [true, false])
    }

    func testAWriteSentAgainInTheRunAfterALostAnswerIsConfirmed() throws {
        let r = try overwriteWithLostAnswer(meanwhile: nil)
        XCTAssertEqual(r.status, "DONE")
        XCTAssertEqual(r.int("synced"), 1)
        XCTAssertEqual(r.int("conflicts"), 0)
        XCTAssertEqual(server.records["r"]?["v"], .int(2))
        XCTAssertTrue(isClean(try entry("r")))
        XCTAssertEqual(server.requests(.update).count, 2)
    }

    func testALostCreateOverwrittenSinceTakesTheOtherDevicesCopy() throws {
        let id = try XCTUnwrap(try localUpsert(#"{"v":1}"#).first?["id"]?.stringValue)
        _ = try up(#"{"name":"u","start":false}"#)
        let direct = DirectTarget(server)
        direct.losesNextAnswer = true
        XCTAssertEqual(try run("u", over: direct).status, "FAILED")
        server.patch(id, #"{"v":"other device"}"#)
        XCTAssertEqual(try run("u", over: DirectTarget(server)).status, "DONE")
        XCTAssertEqual(server.records[id]?["v"], .string("other device"))
        XCTAssertEqual(try entry(id)["v"], .string("other device"))
        XCTAssertTrue(isClean(try entry(id)))
        XCTAssertEqual(server.requests(.create).count, 1)
    }
}
