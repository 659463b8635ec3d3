import XCTest
@testable import TureenStore
@testable import TureenCore

final class StoreOptionsTests: XCTestCase {
    func testKeyingChoices() throws {
        XCTAssertEqual(try StoreOptions.parseOpen(#"{"key":"p"}"#).keying, .passphrase("p"))
        XCTAssertEqual(try StoreOptions.parseOpen(#"{"key":"p"}"#).effectiveKdfIter, StoreOptions.defaultKdfIter)
        let hex = String(repeating: "ab", count: 32)
        let raw = try StoreOptions.parseOpen(#"{"raw_key":"\#(hex)"}"#)
        XCTAssertEqual(raw.keyBytes, Array("x'\(hex)'".utf8))
        XCTAssertNil(raw.effectiveKdfIter)
        XCTAssertFalse(try StoreOptions.parseOpen(#"{"unencrypted":true}"#).isEncrypted)
    }

    func testRefusals() {
        let bad = [
            "{}", #"{"unencrypted":false}"#, #"{"key":""}"#, #"{"key":1}"#,
            #"{"key":"a","unencrypted":true}"#, #"{"raw_key":"zz"}"#,
            #"{"raw_key":"\#(String(repeating: "a", count: 64))","kdf_iter":10}"#,
            #"{"key":"a","kdf_iter":-1}"#, #"{"key":"a","busy_timeout_ms":-5}"#,
            #"{"key":"a","colour":"red"}"#, "[]", "null", #"[{"key":"a"}]"#, #"{"key":"a","key":"b"}"#,
        ]
        for b in bad {
            XCTAssertThrowsError(try StoreOptions.parseOpen(b), b) { e in
                XCTAssertEqual((e as? TureenError)?.code, .invalid, b)
            }
        }
        XCTAssertThrowsError(try StoreOptions.parseRekey(#"{"key":"a","create":true}"#))
    }
}
