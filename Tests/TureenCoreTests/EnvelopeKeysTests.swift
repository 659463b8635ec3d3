import XCTest
@testable import TureenCore

final class EnvelopeKeysTests: XCTestCase {
    private func parse(_ text: String) throws -> EnvelopeKeys {
        try EnvelopeKeys(parsing: JSONParser.parse(text))
    }

    func testTheFirstKeySealsAndEveryKeyIsFound() throws {
        let keys = try TestKeys.keys([("k2", TestKeys.hex2), ("k1", TestKeys.hex1.uppercased())])
        XCTAssertEqual(keys.sealing.id, "k2")
        XCTAssertEqual(keys.all.map(\.id), ["k2", "k1"])
        XCTAssertEqual(keys.key(id: "k1")?.secret.withBytes { Hex.string($0) }, TestKeys.hex1)
        XCTAssertNil(keys.key(id: "k3"))
    }

    func testEveryMalformedMemberIsRefusedWithoutQuotingIt() {
        let k = TestKeys.hex1, secretish = TestKeys.hex3
        let cases: [String] = [
            #"[]"#,
            #"{}"#,
            #"{"keys": []}"#,
            #"{"keys": {}}"#,
            #"{"keys": [{"id": "a", "key": "\#(k)"}], "extra": "\#(secretish)"}"#,
            #"{"keys": [{"id": "a", "key": "\#(k)", "note": "\#(secretish)"}]}"#,
            #"{"keys": [{"id": "a"}]}"#,
            #"{"keys": [{"id": 1, "key": "\#(k)"}]}"#,
            #"{"keys": [{"id": "a", "key": "\#(secretish.dropLast())"}]}"#,
            #"{"keys": [{"id": "a", "key": "\#(secretish)00"}]}"#,
            #"{"keys": [{"id": "a", "key": "\#(secretish.dropLast())g"}]}"#,
            #"{"keys": [{"id": "a", "key": 12}]}"#,
            #"{"keys": [{"id": "a", "key": "\#(k)"}, {"id": "a", "key": "\#(secretish)"}]}"#,
            #"{"keys": [{"id": "", "key": "\#(k)"}]}"#,
            #"{"keys": [{"id": "\#(secretish)", "key": "\#(k)"}]}"#,
            #"{"keys": [{"id": "a b", "key": "\#(k)"}]}"#,
        ]
        for text in cases {
            XCTAssertThrowsError(try parse(text), text) { error in
                let e = error as? TureenError
                XCTAssertEqual(e?.code, .invalid, text)
                let message = e?.message.lowercased() ?? ""
                XCTAssertFalse(message.contains(secretish.prefix(12)), message)
                XCTAssertFalse(message.contains(k.prefix(12)), message)
            }
        }
    }

    func testAnIdOfThirtyTwoCharactersIsTheLongest() throws {
        XCTAssertNoThrow(try TestKeys.keys([(String(repeating: "a", count: 32), TestKeys.hex1)]))
        XCTAssertThrowsError(try TestKeys.keys([(String(repeating: "a", count: 33), TestKeys.hex1)]))
        XCTAssertNoThrow(try TestKeys.keys([("2024-01_key.v2", TestKeys.hex1)]))
    }
}
