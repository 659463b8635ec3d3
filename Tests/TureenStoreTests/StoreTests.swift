import XCTest
import Glibc
@testable import TureenStore

final class StoreTests: XCTestCase {
    var dir = ""

    override func setUp() {
        var t = Array("/tmp/tureen-swift-XXXXXX".utf8CString)
        dir = String(cString: mkdtemp(&t))
    }

    override func tearDown() { _ = system("rm -rf '\(dir)'") }

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
        let bytes = try XCTUnwrap(StoreFile.header(path))
        XCTAssertNotEqual(bytes, StoreFile.plainHeader)
        let whole = try String(decoding: XCTUnwrap(readAll(path)), as: UTF8.self)
        XCTAssertFalse(whole.contains("recognisable needle"))
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
