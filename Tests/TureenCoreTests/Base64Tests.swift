import XCTest
@testable import TureenCore

final class Base64Tests: XCTestCase {
    /// RFC 4648, section 10.
    func testTheRFCVectorsBothWays() {
        let vectors = ["": "", "f": "Zg==", "fo": "Zm8=", "foo": "Zm9v", "foob": "Zm9vYg==", "fooba": "Zm9vYmE=", "foobar": "Zm9vYmFy"]
        for (plain, coded) in vectors {
            XCTAssertEqual(Base64.encode(Array(plain.utf8)), coded)
            XCTAssertEqual(Base64.decode(coded), Array(plain.utf8), coded)
        }
        let all = (0...255).map { UInt8($0) }
        XCTAssertEqual(Base64.decode(Base64.encode(all)), all)
    }

    func testAnythingButCanonicalTextIsRefused() {
        for bad in ["Zg=", "Zg", "Z===", "====", "Zh==", "Zm9=", "Zm8", "Zg==Zg==", "Zm9v\n", "Zm 9", "Zm9-", "Zm9_", "Z=g=", "é123"] {
            XCTAssertNil(Base64.decode(bad), bad)
        }
    }
}
