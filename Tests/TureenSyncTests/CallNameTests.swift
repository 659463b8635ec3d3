import XCTest
@testable import TureenStore
@testable import TureenSync
@testable import TureenCore

/// A message that sends its reader to another call names it as the reader's
/// face spells it: a store opened from Swift gets Swift's method names, and
/// no C function (APICall, CallNames).
final class CallNameTests: SyncTestCase {
    private func message(_ body: () throws -> Void) -> String {
        do { try body() } catch let e as TureenError { return e.message } catch { return "\(error)" }
        XCTFail("no error")
        return ""
    }

    func testASyncNamedAgainAsTheOtherKindPointsToSwiftsDelete() throws {
        _ = try down(#"{"name":"d"}"#)
        let m = message { _ = try up(#"{"name":"d"}"#) }
        XCTAssertTrue(m.contains("delete that one with SyncManager.delete"), m)
        XCTAssertFalse(m.contains("tureen_"), m)
    }

    func testStartInAnUpdatePointsToSwiftsSyncCalls() throws {
        _ = try down(#"{"name":"d"}"#)
        let m = message { _ = try manager.update("d", target: nil, options: try SyncOptions.parse(#"{"start":false}"#)) }
        XCTAssertEqual(m, #""start" belongs to SyncManager.syncDown and SyncManager.syncUp"#)
    }

    func testOtherIndexSpecsPointToSwiftsAlterSoup() throws {
        let m = message { try store.registerSoup(soup, specs: [IndexSpec(path: "other", type: .string)]) }
        XCTAssertEqual(m, "soup '\(soup)' is already registered with other index specs; change them with Store.alterSoup")
    }

    func testTheCSpellingNamesTheHeadersFunctions() throws {
        var options = try StoreOptions.parseOpen(#"{"unencrypted":true}"#)
        options.callNames = CallNames { "tureen_\($0)" }
        let other = try Store.open(path: dir + "/c.db", options: options)
        defer { try? other.close() }
        try other.registerSoup("s", specs: [IndexSpec(path: "a", type: .string)])
        let m = message { try other.registerSoup("s", specs: [IndexSpec(path: "b", type: .string)]) }
        XCTAssertTrue(m.hasSuffix("change them with tureen_soupAlter"), m)
    }
}
