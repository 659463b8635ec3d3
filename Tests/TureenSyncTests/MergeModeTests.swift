import XCTest
@testable import TureenStore
@testable import TureenSync
@testable import TureenCore

/// Each merge mode with both sides changed: record {"a":1,"b":1,"c":1}
/// synced down, then changed here and on the server.
final class MergeModeTests: SyncTestCase {
    private static let disjoint = (local: #"{"b":2}"#, remote: #"{"a":2}"#)
    private static let same = (local: #"{"a":3}"#, remote: #"{"a":2}"#)

    /// Runs sync up in `mode` over a local and (unless nil) a remote change;
    /// checks the conflict (or none) and the server's fields after.
    private func upBothChanged(_ mode: String, local: String, remote: String?, conflict: Bool, server expected: String?,
                               file: StaticString = #filePath, line: UInt = #line) throws {
        server.put(#"{"id":"r","a":1,"b":1,"c":1}"#)
        _ = try down()
        let before = server.records["r"]
        if let remote { server.patch("r", remote) }
        let theirs = server.records["r"]
        try localUpsert(local, merge: true)
        let r = try up(#"{"mergeMode":"\#(mode)"}"#)
        if conflict {
            XCTAssertEqual(r.int("conflicts"), 1, file: file, line: line)
            XCTAssertEqual(server.records["r"], theirs, "the server's copy is left alone", file: file, line: line)
            XCTAssertEqual(try conflicts().count, 1, file: file, line: line)
            if mode == "LEAVE_IF_CHANGED" {
                XCTAssertEqual(r.status, "DONE", file: file, line: line)
            } else {
                XCTAssertEqual(r.status, "FAILED", file: file, line: line)
                XCTAssertEqual(r.error?.code, .conflict, file: file, line: line)
            }
        } else {
            XCTAssertEqual(r.status, "DONE", file: file, line: line)
            XCTAssertNotEqual(server.records["r"], before, file: file, line: line)
            XCTAssertTrue(try conflicts().isEmpty, file: file, line: line)
            XCTAssertTrue(isClean(try entry("r")), file: file, line: line)
        }
        if let expected {
            XCTAssertEqual(appFields(server.records["r"], ignoring: ["id", "last_modified"]), try object(expected), file: file, line: line)
        }
    }

    private func localChange(_ fields: String) -> String { "{\"id\":\"r\"," + fields.dropFirst() }

    func testUpOverwriteReplacesTheServersCopyWhateverChanged() throws {
        try upBothChanged("OVERWRITE", local: localChange(Self.same.local), remote: Self.same.remote, conflict: false,
                          server: #"{"a":3,"b":1,"c":1}"#)
        XCTAssertEqual(server.requests(.update).last?["ifMatch"], .null)
    }

    func testUpOverwriteWithDisjointChangesSendsTheLocalCopy() throws {
        try upBothChanged("OVERWRITE", local: localChange(Self.disjoint.local), remote: Self.disjoint.remote, conflict: false,
                          server: #"{"a":1,"b":2,"c":1}"#)
    }

    func testUpLeaveIfChangedLeavesAServerChangeAsAConflict() throws {
        try upBothChanged("LEAVE_IF_CHANGED", local: localChange(Self.disjoint.local), remote: Self.disjoint.remote,
                          conflict: true, server: nil)
    }

    func testUpLeaveIfChangedSendsWhenTheServerDidNotChange() throws {
        try upBothChanged("LEAVE_IF_CHANGED", local: localChange(Self.disjoint.local), remote: nil, conflict: false,
                          server: #"{"a":1,"b":2,"c":1}"#)
        // Sent against the base's version, so a change there would refuse it.
        XCTAssertNotEqual(server.requests(.update).first?["ifMatch"], .null)
    }

    func testUpMergeAcceptYoursMergesDisjointChanges() throws {
        try upBothChanged("MERGE_ACCEPT_YOURS", local: localChange(Self.disjoint.local), remote: Self.disjoint.remote,
                          conflict: false, server: #"{"a":2,"b":2,"c":1}"#)
    }

    func testUpMergeAcceptYoursWinsAClash() throws {
        try upBothChanged("MERGE_ACCEPT_YOURS", local: localChange(Self.same.local), remote: Self.same.remote,
                          conflict: false, server: #"{"a":3,"b":1,"c":1}"#)
    }

    func testUpMergeFailIfConflictMergesDisjointChanges() throws {
        try upBothChanged("MERGE_FAIL_IF_CONFLICT", local: localChange(Self.disjoint.local), remote: Self.disjoint.remote,
                          conflict: false, server: #"{"a":2,"b":2,"c":1}"#)
    }

    func testUpMergeFailIfConflictFailsOnAClash() throws {
        try upBothChanged("MERGE_FAIL_IF_CONFLICT", local: localChange(Self.same.local), remote: Self.same.remote,
                          conflict: true, server: nil)
    }

    func testUpMergeFailIfChangedFailsOnAnyServerChange() throws {
        try upBothChanged("MERGE_FAIL_IF_CHANGED", local: localChange(Self.disjoint.local), remote: Self.disjoint.remote,
                          conflict: true, server: nil)
    }

    func testUpMergeFailIfChangedSendsWhenTheServerDidNotChange() throws {
        try upBothChanged("MERGE_FAIL_IF_CHANGED", local: localChange(Self.disjoint.local), remote: nil, conflict: false,
                          server: #"{"a":1,"b":2,"c":1}"#)
    }

    // MARK: sync down

    func testDownOverwriteReplacesALocalChange() throws {
        server.put(#"{"id":"r","v":1}"#)
        _ = try down(#"{"name":"d"}"#)
        try localUpsert(#"{"id":"r","v":"mine"}"#)
        server.patch("r", #"{"v":"theirs"}"#)
        XCTAssertEqual(try resync("d").status, "DONE")
        let e = try entry("r")
        XCTAssertEqual(e["v"], .string("theirs"))
        XCTAssertTrue(isClean(e))
    }

    func testDownLeaveIfChangedKeepsALocalChange() throws {
        server.put(#"{"id":"r","v":1}"#)
        server.put(#"{"id":"s","v":1}"#)
        _ = try down(#"{"name":"d","mergeMode":"LEAVE_IF_CHANGED"}"#)
        try localUpsert(#"{"id":"r","v":"mine"}"#)
        server.patch("r", #"{"v":"theirs"}"#)
        server.patch("s", #"{"v":2}"#)
        let r = try resync("d")
        XCTAssertEqual(r.status, "DONE")
        XCTAssertEqual(try entry("r")["v"], .string("mine"))
        XCTAssertEqual(try entry("r")[LocalFlags.local], .bool(true))
        XCTAssertEqual(try entry("s")["v"], .int(2))
    }

    func testDownOverwriteAppliesADeletionOverALocalChange() throws {
        server.put(#"{"id":"r","v":1}"#)
        _ = try down(#"{"name":"d"}"#)
        try localUpsert(#"{"id":"r","v":"mine"}"#)
        server.delete("r")
        _ = try resync("d")
        XCTAssertNil(try local()["r"])
    }

    func testDownLeaveIfChangedRecordsADeletionOverALocalChangeAsAConflict() throws {
        server.put(#"{"id":"r","v":1}"#)
        _ = try down(#"{"name":"d","mergeMode":"LEAVE_IF_CHANGED"}"#)
        try localUpsert(#"{"id":"r","v":"mine"}"#)
        server.delete("r")
        let r = try resync("d")
        XCTAssertEqual(r.int("conflicts"), 1)
        XCTAssertEqual(try entry("r")["v"], .string("mine"))
        let c = try XCTUnwrap(try conflicts().first)
        XCTAssertEqual(c["theirs"], .null)
        XCTAssertEqual(c["yours"]?["v"], .string("mine"))
    }

    func testDownRefusesTheMergeModes() throws {
        for mode in ["MERGE_ACCEPT_YOURS", "MERGE_FAIL_IF_CONFLICT", "MERGE_FAIL_IF_CHANGED"] {
            XCTAssertThrowsError(try down(#"{"mergeMode":"\#(mode)"}"#), mode) {
                XCTAssertEqual(($0 as? TureenError)?.code, .invalid)
            }
        }
        XCTAssertTrue(server.calls.isEmpty)
    }
}
