import XCTest
import Glibc
@testable import TureenStore
@testable import TureenSync
@testable import TureenCore

/// How a sync call ended: its state, read as JSON, and its error.
struct SyncOutcome {
    let state: JSON
    let error: TureenError?

    init(_ r: SyncResult) throws {
        state = try JSONParser.parse(r.state)
        error = r.error
    }

    var status: String? { state["status"]?.stringValue }
    func int(_ key: String) -> Int64? { state[key]?.int64Value }
    func ids(_ key: String) -> [Int64] { state[key]?.arrayValue?.compactMap { $0.int64Value } ?? [] }
}

/// A temporary store with soup "things", its sync manager, and a FakeServer
/// registered as callback target "fake", the way the C layer wires them.
class SyncTestCase: XCTestCase {
    let soup = "things"
    var dir = ""
    var store: Store!
    var session: Session!
    var manager: SyncManager!
    var server: FakeServer!
    /// The target JSON naming `server`.
    var target = ""

    override func setUpWithError() throws {
        var template = Array("/tmp/tureen-sync-XXXXXX".utf8CString)
        dir = String(cString: mkdtemp(&template))
        store = try Store.open(path: dir + "/sync.db", options: try StoreOptions.parseOpen(#"{"unencrypted":true}"#))
        try store.registerSoup(soup, specs: [IndexSpec(path: "id", type: .string)])
        session = Session(store)
        manager = try session.sync()
        server = FakeServer()
        target = try server.register(on: manager)
    }

    override func tearDown() {
        try? session?.close {}  // as tureen_store_close: stops the engine, releases the targets
        session = nil
        store = nil
        manager = nil
        server = nil
        _ = system("rm -rf '\(dir)'")
    }

    // MARK: syncing, with JSON text as the C layer passes it

    func down(_ options: String? = nil, target t: String? = nil, progress: ((String) -> Void)? = nil) throws -> SyncOutcome {
        try SyncOutcome(manager.syncDown(target: try TargetSpec.parse(t ?? target), soup: soup,
                                         options: try SyncOptions.parse(options), progress: progress))
    }

    func up(_ options: String? = nil, target t: String? = nil, progress: ((String) -> Void)? = nil) throws -> SyncOutcome {
        try SyncOutcome(manager.syncUp(target: try TargetSpec.parse(t ?? target), soup: soup,
                                       options: try SyncOptions.parse(options), progress: progress))
    }

    func resync(_ name: String, progress: ((String) -> Void)? = nil) throws -> SyncOutcome {
        try SyncOutcome(manager.resync(name, progress: progress))
    }

    func status(_ name: String) throws -> JSON { try JSONParser.parse(try manager.status(name)) }

    // MARK: local records

    /// The soup's entries by record id.
    func local(idField: String = "id", soup s: String? = nil) throws -> [String: JSONObject] {
        let q = try QuerySpec.parse(#"{"queryType":"all","soupName":"\#(s ?? soup)","pageSize":10000}"#)
        let rows = try JSONParser.parse(try store.query(q, pageIndex: 0).string).arrayValue ?? []
        var out: [String: JSONObject] = [:]
        for row in rows { if let o = row.objectValue, let id = o[idField]?.stringValue { out[id] = o } }
        return out
    }

    func entry(_ id: String, file: StaticString = #filePath, line: UInt = #line) throws -> JSONObject {
        try XCTUnwrap(try local()[id], "no local entry \(id)", file: file, line: line)
    }

    func entryId(_ id: String) throws -> Int64 { try XCTUnwrap(try entry(id)[EntryText.idKey]?.int64Value) }

    /// tureen_local_upsert; the entries as stored.
    @discardableResult
    func localUpsert(_ entries: String, merge: Bool = false) throws -> [JSONObject] {
        let stored = try JSONParser.parse(try manager.localUpsert(soup: soup, entries: entries, idField: nil, merge: merge).string)
        return (stored.arrayValue ?? [stored]).compactMap { $0.objectValue }
    }

    /// tureen_local_delete_records.
    func localDelete(_ ids: String...) throws {
        try manager.localDelete(soup: soup, recordIds: ids.map { .string($0) }, idField: nil)
    }

    func conflicts() throws -> [JSONObject] {
        (try JSONParser.parse(try manager.conflicts(soup: soup)).arrayValue ?? []).compactMap { $0.objectValue }
    }
}

/// An entry's record: without the store's members (`_soup…`), the sync's
/// flags (`__…`) and the names in `ignoring`.
func appFields(_ o: JSONObject?, ignoring: [String] = []) -> JSONObject? {
    guard let o else { return nil }
    var out = JSONObject()
    for m in o.members where !m.key.hasPrefix("_soup") && !m.key.hasPrefix("__") && !ignoring.contains(m.key) {
        out[m.key] = m.value
    }
    return out
}

/// Every flag present and false: the entry is in step with the server.
func isClean(_ o: JSONObject) -> Bool { LocalFlags.all.allSatisfy { o[$0] == .bool(false) } }

/// An object from JSON text, for comparing with records.
func object(_ text: String) throws -> JSONObject { try XCTUnwrap(try JSONParser.parse(text).objectValue) }
