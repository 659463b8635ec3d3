import XCTest
import Glibc
@testable import TureenStore
@testable import TureenCore

final class StoreTests: XCTestCase {
    var dir = ""

    override func setUp() {
        dir = makeTestDirectory()
    }

    override func tearDown() { removeTestDirectory(dir) }

    private func opts(_ json: String) throws -> StoreOptions { try StoreOptions.parseOpen(json) }

    func testWrittenTextIsEncryptedOnDisk() throws {
        let path = dir + "/s.db"
        let store = try Store.open(path: path, options: try opts(#"{"key":"k","kdf_iter":1000}"#))
        try store.withConnection { c in
            try c.execute("CREATE TABLE probe(x)")
            let s = try c.prepare("INSERT INTO probe VALUES (?)")
            s.bind(1, "a very recognisable needle")
            try s.step()
        }
        try store.close()
        let bytes = try XCTUnwrap(Connection.fileHeader(path: path, api: try SQLCipherLibrary.api()))
        XCTAssertNotEqual(bytes, StoreFile.plainHeader)
        let whole = try String(decoding: XCTUnwrap(readAll(path)), as: UTF8.self)
        XCTAssertFalse(whole.contains("recognisable needle"))
    }

    /// Queries read one snapshot without BEGIN/COMMIT (Connection.snapshot):
    /// what another connection commits meanwhile stays unseen until it ends,
    /// and the catalog version read to hold it is the store's.
    func testASnapshotHoldsWhileAnotherConnectionCommits() throws {
        let store = try Store.open(path: dir + "/snap.db", options: try opts(#"{"unencrypted":true}"#))
        defer { try? store.close() }
        try store.registerSoup("s", specs: [IndexSpec(path: "k", type: .string)])
        try store.withConnection { c in
            try c.execute("CREATE TABLE t (x)")
            try c.execute("INSERT INTO t VALUES (1)")
        }
        try store.withReader { r in
            let seen: [Int64?] = try r.snapshot {
                XCTAssertNotNil(r.snapshotCatalogVersion)
                XCTAssertGreaterThan(r.snapshotCatalogVersion ?? 0, 0)
                let before = try r.scalarInt("SELECT count(*) FROM t")
                try store.withConnection { w in try w.execute("INSERT INTO t VALUES (2)") }
                let nested: Int64? = try r.snapshot { try r.scalarInt("SELECT count(*) FROM t") }
                return [before, nested, try r.scalarInt("SELECT count(*) FROM t")]
            }
            XCTAssertEqual(seen, [1, 1, 1])
            XCTAssertNil(r.snapshotCatalogVersion)
            XCTAssertEqual(try r.scalarInt("SELECT count(*) FROM t"), 2)
        }
    }

    func testASnapshotSeesEveryCatalogChangeWhoeverMadeIt() throws {
        // A snapshot reads the catalog version again only when something
        // was written since: by another connection (the data version) or by
        // its own (its count of changes). Both must show.
        let store = try Store.open(path: dir + "/catalog.db", options: try opts(#"{"unencrypted":true}"#))
        defer { try? store.close() }
        try store.registerSoup("s", specs: [IndexSpec(path: "k", type: .string)])
        func version(_ c: Connection) throws -> Int64 { try c.snapshot { c.snapshotCatalogVersion ?? -1 } }
        try store.withReader { r in
            let first = try version(r)
            XCTAssertEqual(try version(r), first, "nothing written: the same version")
            try store.withConnection { w in try w.execute("INSERT INTO tureen_meta VALUES ('unrelated', 1)") }
            XCTAssertEqual(try version(r), first, "a write that is no catalog change keeps the version")
            try store.registerSoup("t", specs: [IndexSpec(path: "k", type: .string)])
            XCTAssertGreaterThan(try version(r), first, "another connection's catalog change shows")
        }
        try store.withConnection { w in
            let first = try version(w)
            try SoupCatalog.bump(w)
            XCTAssertEqual(try version(w), first + 1, "the connection's own catalog change shows")
        }
    }

    func testCloseTwiceIsMisuse() throws {
        let store = try Store.open(path: dir + "/c.db", options: try opts(#"{"unencrypted":true}"#))
        try store.close()
        XCTAssertThrowsError(try store.close()) { XCTAssertEqual(($0 as? TureenError)?.code, .misuse) }
        XCTAssertThrowsError(try store.size()) { XCTAssertEqual(($0 as? TureenError)?.code, .misuse) }
    }

    func testMissingDirectoryIsIOErrorNamingIt() throws {
        XCTAssertThrowsError(try Store.open(path: dir + "/nodir/x.db", options: try opts(#"{"key":"k"}"#))) { e in
            XCTAssertEqual((e as? TureenError)?.code, .io)
            XCTAssertTrue((e as? TureenError)?.message.contains("/nodir") ?? false)
        }
        XCTAssertFalse(StoreFile.exists(dir + "/nodir"))
    }

    private func readAll(_ path: String) -> [UInt8]? {
        guard let f = fopen(path, "rb") else { return nil }
        defer { fclose(f) }
        var out: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = fread(&buf, 1, buf.count, f)
            if n <= 0 { break }
            out += buf[0..<n]
        }
        return out
    }
}

final class EntryStorageTests: XCTestCase {
    func testEntriesComeBackAsValidJSONWhateverTheirSpacing() throws {
        let dir = makeTestDirectory()
        defer { removeTestDirectory(dir) }
        let store = try Store.open(path: dir + "/e.db", options: try StoreOptions.parseOpen(#"{"unencrypted":true}"#))
        try store.registerSoup("s", specs: [IndexSpec(path: "a", type: .integer)])
        let input = #"[ { "a" : 1 , "b":[ 1, 2 ] } , {"a":2,"a":3}, {}, {"a":4,"_soupEntryId":null} ]"#
        let written = try JSONParser.parse(String(decoding: try store.upsert(soup: "s", entries: input, externalIdPath: nil), as: UTF8.self))
        let got = try JSONParser.parse(String(decoding: try store.retrieve(soup: "s", ids: [1, 2, 3, 4]), as: UTF8.self))
        XCTAssertEqual(got, written)
        guard case .array(let items) = got else { return XCTFail("not an array") }
        XCTAssertEqual(items.count, 4)
        XCTAssertEqual(items[0]["b"], .array([.int(1), .int(2)]))
        XCTAssertEqual(items[1]["a"], .int(3), "a repeated name keeps the last value, as the index does")
        XCTAssertEqual(items[2].objectValue?.keys, ["_soupEntryId", "_soupLastModifiedDate"])
        XCTAssertEqual(items[3]["_soupEntryId"], .int(4))
        try store.close()
    }
}
