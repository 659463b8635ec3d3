import XCTest
@testable import TureenStore
@testable import TureenSync
@testable import TureenCore

/// The transform step on its own, over an in-memory target: the order of
/// steps, what a failing step fails, retries, and the copies decoded.
final class TransformTests: XCTestCase {
    /// A target that keeps records as they are sent, and answers with them.
    final class MemoryTarget: SyncTarget {
        var records: [String: JSONObject] = [:]
        var pushed: [Change] = []
        var idField: String { "id" }
        var modifiedField: String { "last_modified" }
        var sortedByModification: Bool { false }
        var batchSize: Int { 10 }
        var requestCount: Int { 0 }
        var fetchesOnAnyThread: Bool { true }
        func abandon() {}
        func fetch(since: FeedPosition?, next: JSON?) throws -> FetchPage {
            FetchPage(records: records.keys.sorted().compactMap { records[$0] })
        }
        func push(_ changes: [Change]) throws -> [PushOutcome] {
            pushed += changes
            return changes.map { c in
                var r = c.record
                r["last_modified"] = .int(Int64(pushed.count))
                records[c.id] = r
                return .applied(r)
            }
        }
        func get(id: String) throws -> JSONObject? { records[id] }
        func version(of base: JSONObject) -> String? { nil }
        func isTombstone(_ record: JSONObject) -> Bool { record["deleted"] == .bool(true) }
    }

    /// A step that wraps "name" in its letter, and unwraps it.
    final class Wrap: RecordTransformer {
        let letter: String
        var failEncode: TureenCode?
        var failuresLeft = Int.max
        init(_ letter: String) { self.letter = letter }
        var anyThread: Bool { false }
        func encode(_ record: JSONObject) throws -> JSONObject {
            if let code = failEncode, failuresLeft > 0 {
                failuresLeft -= 1
                throw TureenError(code, "refused")
            }
            var r = record
            if let n = r["name"]?.stringValue { r["name"] = .string("\(letter)(\(n))") }
            return r
        }
        func decode(_ record: JSONObject) throws -> JSONObject {
            var r = record
            guard let n = r["name"]?.stringValue else { return r }
            guard n.hasPrefix(letter + "("), n.hasSuffix(")") else { throw TureenError.invalid("\(letter) cannot read \(n)") }
            r["name"] = .string(String(n.dropFirst(2).dropLast()))
            return r
        }
    }

    private func record(_ text: String) throws -> JSONObject { try XCTUnwrap(try JSONParser.parse(text).objectValue) }

    private func target(_ inner: MemoryTarget, _ steps: [Wrap]) -> TransformingTarget {
        TransformingTarget(inner, TransformPipeline(steps.map { ($0.letter, $0) }, idField: "id", modifiedField: "last_modified",
                                                    cancel: CancelFlag(), networkRetries: 2))
    }

    private func change(_ id: String, _ name: String) throws -> Change {
        Change(kind: .create, id: id, record: try record(#"{"id":"\#(id)","name":"\#(name)"}"#), partial: false, ifMatch: nil, base: nil)
    }

    func testEncodesInListOrderAndDecodesInReverse() throws {
        let inner = MemoryTarget()
        let t = target(inner, [Wrap("A"), Wrap("B")])
        let outcomes = try t.push([try change("x", "plain")])
        XCTAssertEqual(inner.records["x"]?["name"], .string("B(A(plain))"))
        guard case .applied(let copy?) = outcomes[0] else { return XCTFail("not applied: \(outcomes)") }
        XCTAssertEqual(copy["name"], .string("plain"))
        XCTAssertEqual(try t.fetch(since: nil, next: nil).records.first?["name"], .string("plain"))
        XCTAssertEqual(try t.get(id: "x")?["name"], .string("plain"))
    }

    func testAFailedEncodeRejectsThatChangeAloneAndItIsNotSent() throws {
        let inner = MemoryTarget()
        let a = Wrap("A")
        let t = target(inner, [a])
        a.failEncode = .invalid
        a.failuresLeft = 1
        let outcomes = try t.push([try change("x", "one"), try change("y", "two")])
        guard case .rejected(let e) = outcomes[0] else { return XCTFail("x not rejected: \(outcomes)") }
        XCTAssertEqual(e.code, .invalid)
        XCTAssertTrue(e.message.contains("transformer 'A'") && e.message.contains("'x'"), e.message)
        guard case .applied = outcomes[1] else { return XCTFail("y not applied: \(outcomes)") }
        XCTAssertEqual(inner.pushed.map(\.id), ["y"])
    }

    func testANetworkErrorIsRetriedThenFailsTheCall() throws {
        let inner = MemoryTarget()
        let a = Wrap("A")
        let t = target(inner, [a])
        a.failEncode = .network
        a.failuresLeft = 2
        guard case .applied = try t.push([try change("x", "late")])[0] else { return XCTFail("not retried") }
        a.failuresLeft = 3
        XCTAssertThrowsError(try t.push([try change("y", "never")])) { XCTAssertEqual(($0 as? TureenError)?.code, .network) }
    }

    func testARecordThatDoesNotDecodeStaysAsItsIdAndStampWithItsFailure() throws {
        let inner = MemoryTarget()
        inner.records["good"] = try record(#"{"id":"good","name":"A(fine)","last_modified":5}"#)
        inner.records["bad"] = try record(#"{"id":"bad","name":"raw","last_modified":7,"other":1}"#)
        let page = try target(inner, [Wrap("A")]).fetch(since: nil, next: nil)
        XCTAssertEqual(page.records.count, 2)
        XCTAssertEqual(page.records[0], try record(#"{"id":"bad","last_modified":7}"#))
        XCTAssertEqual(page.failures.keys.sorted(), [0])
        XCTAssertEqual(page.records[1]["name"], .string("fine"))
    }

    func testAStepMayNotChangeTheId() throws {
        final class Renamer: RecordTransformer {
            var anyThread: Bool { true }
            func encode(_ record: JSONObject) throws -> JSONObject { var r = record; r["id"] = .string("other"); return r }
            func decode(_ record: JSONObject) throws -> JSONObject { record }
        }
        let inner = MemoryTarget()
        let t = TransformingTarget(inner, TransformPipeline([("r", Renamer())], idField: "id", modifiedField: "last_modified",
                                                            cancel: CancelFlag(), networkRetries: 0))
        guard case .rejected(let e) = try t.push([try change("x", "n")])[0] else { return XCTFail("not rejected") }
        XCTAssertTrue(e.message.contains("changed the id"), e.message)
        XCTAssertTrue(inner.pushed.isEmpty)
    }

    func testHostStepsKeepTheFeedAndUploadsOnTheSyncsThread() {
        let t = target(MemoryTarget(), [Wrap("A")])
        XCTAssertFalse(t.fetchesOnAnyThread)
        XCTAssertNil(t.parallelUploads)
    }
}
