import XCTest
@testable import TureenCore

final class RecordEnvelopeTests: XCTestCase {
    private var keys: EnvelopeKeys!

    override func setUpWithError() throws {
        keys = try TestKeys.keys([("k1", TestKeys.hex1)])
    }

    private func record(_ text: String) throws -> JSONObject {
        guard let o = try JSONParser.parse(text).objectValue else { throw TureenError.invalid("not an object") }
        return o
    }

    private let local = #"{"id": "r1", "last_modified": 1700, "title": "secret plans", "n": 42, "tags": ["x", {"deep": null}]}"#

    private func sealed(_ text: String? = nil, id: String = "r1", collection: String = "notes") throws -> JSONObject {
        try RecordEnvelope.seal(record: record(text ?? local), id: id, collection: collection, keys: keys)
    }

    private func open(_ server: JSONObject, id: String = "r1", collection: String = "notes", keys: EnvelopeKeys? = nil) throws -> JSONObject {
        try RecordEnvelope.open(serverRecord: server, id: id, collection: collection, keys: keys ?? self.keys)
    }

    private func assertFails(_ code: TureenCode, _ body: @autoclosure () throws -> JSONObject, _ note: String = "",
                             file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try body(), note, file: file, line: line) { error in
            let e = error as? TureenError
            XCTAssertEqual(e?.code, code, "\(note): \(e?.message ?? "\(error)")", file: file, line: line)
            for hex in [TestKeys.hex1, TestKeys.hex2, TestKeys.hex3] {
                XCTAssertFalse(e?.message.lowercased().contains(hex.prefix(8)) ?? true, file: file, line: line)
            }
        }
    }

    /// The envelope with its ciphertext (or nonce) changed by `change`.
    private func altered(_ server: JSONObject, _ name: String = "c", _ change: (inout [UInt8]) -> Void) -> JSONObject {
        var s = server
        var env = s["enc"]?.objectValue ?? JSONObject()
        var bytes = Base64.decode(env[name]?.stringValue ?? "") ?? []
        change(&bytes)
        env[name] = .string(Base64.encode(bytes))
        s["enc"] = .object(env)
        return s
    }

    func testARecordComesBackWhole() throws {
        let server = try sealed()
        XCTAssertEqual(try open(server), try record(local))
        XCTAssertEqual(try open(try sealed(#"{"id": "r1"}"#)), try record(#"{"id": "r1"}"#))
    }

    func testTheServerSeesOnlyTheClearMembersAndTheEnvelope() throws {
        let server = try sealed()
        XCTAssertEqual(server.keys, ["id", "last_modified", "enc"])
        XCTAssertEqual(server["last_modified"], .int(1700))
        XCTAssertEqual(server["enc"]?.objectValue?.keys, ["v", "kid", "n", "c"])
        XCTAssertEqual(server["enc"]?["v"], .int(1))
        XCTAssertEqual(server["enc"]?["kid"], .string("k1"))
        let text = JSONWriter.string(.object(server))
        for word in ["title", "secret", "plans", "tags", "deep"] { XCTAssertFalse(text.contains(word), word) }
        // A number as short as 42 may turn up in random base64: looked for
        // outside the envelope's ciphertext and nonce only.
        var clear = server
        clear["enc"] = .null
        XCTAssertFalse(JSONWriter.string(.object(clear)).contains("42"))
    }

    func testSealingTwiceGivesTwoNonces() throws {
        XCTAssertNotEqual(try sealed()["enc"]?["n"], try sealed()["enc"]?["n"])
    }

    func testEveryAlteredByteOfNonceCiphertextOrTagIsCorrupt() throws {
        let server = try sealed()
        let count = Base64.decode(server["enc"]?["c"]?.stringValue ?? "")?.count ?? 0
        XCTAssertGreaterThan(count, AESGCM.tagSize)
        for i in 0..<AESGCM.nonceSize {
            assertFails(.corrupt, try open(altered(server, "n") { $0[i] ^= 0x80 }), "nonce byte \(i)")
        }
        for i in 0..<count {
            assertFails(.corrupt, try open(altered(server) { $0[i] ^= 0x01 }), i < count - 16 ? "ciphertext byte \(i)" : "tag byte \(i)")
        }
    }

    func testTruncatedOrMalformedEnvelopesAreCorrupt() throws {
        let server = try sealed()
        assertFails(.corrupt, try open(altered(server) { $0.removeLast() }), "one byte short")
        assertFails(.corrupt, try open(altered(server) { $0.removeFirst() }), "first byte gone")
        assertFails(.corrupt, try open(altered(server) { $0 = Array($0.prefix(10)) }), "shorter than a tag")
        assertFails(.corrupt, try open(altered(server) { $0 = [] }), "empty")
        assertFails(.corrupt, try open(altered(server, "n") { $0.removeLast() }), "short nonce")
        var text = server
        let c = server["enc"]?["c"]?.stringValue ?? ""
        text["enc"] = .object(JSONObject([("v", .int(1)), ("kid", .string("k1")), ("n", server["enc"]?["n"] ?? .null),
                                          ("c", .string(String(c.dropLast(2))))]))
        assertFails(.corrupt, try open(text), "base64 cut")
        for (name, value) in [("v", JSON.int(2)), ("v", .string("1")), ("kid", .int(1)), ("n", .null), ("c", .array([])), ("extra", .int(0))] {
            var env = server["enc"]?.objectValue ?? JSONObject()
            env[name] = value
            var s = server
            s["enc"] = .object(env)
            assertFails(.corrupt, try open(s), "\(name) = \(value)")
        }
        for name in ["v", "kid", "n", "c"] {
            var env = server["enc"]?.objectValue ?? JSONObject()
            env[name] = nil
            var s = server
            s["enc"] = .object(env)
            assertFails(.corrupt, try open(s), "no \(name)")
        }
        var notObject = server
        notObject["enc"] = .string("x")
        assertFails(.corrupt, try open(notObject), "envelope not an object")
    }

    func testARecordInClearIsCorrupt() throws {
        assertFails(.corrupt, try open(record(local)), "plaintext from the server")
        assertFails(.corrupt, try open(record(#"{"id": "r1", "deleted": false}"#)), "no envelope, not deleted")
    }

    func testAnEnvelopeMovedToAnotherIdOrCollectionIsCorrupt() throws {
        var server = try sealed()
        assertFails(.corrupt, try open(server, collection: "other"), "other collection")
        server["id"] = .string("r2")
        assertFails(.corrupt, try open(server, id: "r2"), "other id")
        assertFails(.corrupt, try open(server, id: "r1"), "clear id differs from the one asked for")
        // Collection "a" + id "bc" must not be collection "ab" + id "c".
        let s = try sealed(#"{"x": 1}"#, id: "bc", collection: "a")
        var moved = s
        moved["id"] = .string("c")
        assertFails(.corrupt, try open(moved, id: "c", collection: "ab"), "boundary moved")
    }

    func testAnUnlistedKeyIsAKeyErrorAndARelabelledOneIsCorrupt() throws {
        let server = try sealed()
        let others = try TestKeys.keys([("k2", TestKeys.hex2)])
        assertFails(.key, try open(server, keys: others), "unknown kid")
        // The right id, but another key behind it.
        let impostor = try TestKeys.keys([("k1", TestKeys.hex2)])
        assertFails(.corrupt, try open(server, keys: impostor), "wrong key under the kid")
        // Relabelled to another listed key id.
        let both = try TestKeys.keys([("k1", TestKeys.hex1), ("k2", TestKeys.hex1)])
        var relabelled = server
        var env = server["enc"]?.objectValue ?? JSONObject()
        env["kid"] = .string("k2")
        relabelled["enc"] = .object(env)
        assertFails(.corrupt, try open(relabelled, keys: both), "kid relabelled")
        env["kid"] = .string(TestKeys.hex3)
        relabelled["enc"] = .object(env)
        assertFails(.key, try open(relabelled), "a key in the kid")
    }

    func testRotationSealsWithTheFirstAndOpensWithAny() throws {
        let old = try sealed()
        let rotated = try TestKeys.keys([("k2", TestKeys.hex2), ("k1", TestKeys.hex1)])
        XCTAssertEqual(try open(old, keys: rotated), try record(local))
        XCTAssertTrue(RecordEnvelope.needsReencrypt(old, under: rotated))
        XCTAssertFalse(RecordEnvelope.needsReencrypt(old, under: keys))
        let new = try RecordEnvelope.seal(record: open(old, keys: rotated), id: "r1", collection: "notes", keys: rotated)
        XCTAssertEqual(RecordEnvelope.keyId(of: new), "k2")
        XCTAssertFalse(RecordEnvelope.needsReencrypt(new, under: rotated))
        XCTAssertEqual(try open(new, keys: rotated), try record(local))
        assertFails(.key, try open(new), "the old list lacks the new key")
        XCTAssertTrue(RecordEnvelope.needsReencrypt(try record(local), under: rotated))
        XCTAssertFalse(RecordEnvelope.needsReencrypt(try record(#"{"id": "r1", "deleted": true}"#), under: rotated))
    }

    func testTombstonesPassThroughBothWays() throws {
        let tomb = try record(#"{"id": "r1", "last_modified": 9, "deleted": true}"#)
        XCTAssertEqual(try open(tomb), tomb)
        let sealedTomb = try sealed(#"{"id": "r1", "last_modified": 9, "deleted": true, "title": "secret"}"#)
        XCTAssertEqual(sealedTomb, tomb)
        XCTAssertNil(RecordEnvelope.keyId(of: sealedTomb))
    }

    /// The server's record of `plaintext` sealed as it is, as only a
    /// holder of the key (another implementation, say) could write it.
    private func sealedText(_ plaintext: String, lastModified: Int64? = nil) throws -> JSONObject {
        let fake = try Array(plaintext.utf8).withUnsafeBytes {
            try AESGCM.seal($0, key: keys.sealing.secret, nonce: [UInt8](repeating: 1, count: 12),
                            aad: RecordEnvelope.associatedData(id: "r1", collection: "notes", keyId: "k1"))
        }
        var server = JSONObject([("id", .string("r1"))])
        if let m = lastModified { server["last_modified"] = .int(m) }
        server["enc"] = .object(JSONObject([
            ("v", .int(1)), ("kid", .string("k1")), ("n", .string(Base64.encode([UInt8](repeating: 1, count: 12)))),
            ("c", .string(Base64.encode(fake))),
        ]))
        return server
    }

    func testDecryptedFieldsMayNotClaimTheClearMembers() throws {
        // Only a holder of the key could write this; it is refused all the same.
        assertFails(.corrupt, try open(sealedText(#"{"deleted": true}"#)), "clear member inside")
        assertFails(.corrupt, try open(sealedText(#"[{"a": 1}]"#)), "an array")
        assertFails(.corrupt, try open(sealedText(#"{"a": 1} x"#)), "trailing text")
    }

    /// The text sync down stores: the record as `open` gives it, or none
    /// where the plaintext's text says more than its tree.
    private func openedText(_ server: JSONObject) throws -> (JSONObject, JSON?) {
        let w = JSONWriter()
        w.appendRaw("garbage before")
        let (record, span) = try RecordEnvelope.open(serverRecord: server, id: "r1", collection: "notes", keys: keys, textTo: w)
        XCTAssertEqual(try open(server), record)
        guard let span else { return (record, nil) }
        return (record, try JSONParser.parse(bytes: UnsafeBufferPointer(rebasing: w.buffer[span])))
    }

    func testTheOpenedTextIsTheOpenedRecord() throws {
        for server in [try sealed(), try sealed(#"{"id": "r1"}"#), try sealedText(#" { "a" : [1, {"b": "\u00e9"}] } "#, lastModified: 5),
                       try sealedText("{ }", lastModified: 6), try sealedText("{}")] {
            let (record, text) = try openedText(server)
            XCTAssertEqual(text, .object(record), "\(server)")
        }
        XCTAssertEqual(try openedText(sealed()).0, try record(local))
        // Spelled otherwise than the tree would write it, or not a record: no text.
        for plaintext in [#"{"a": 1, "a": 2}"#, #"{"a": "sha256\u002dx"}"#, #"{"a": 18446744073709551616}"#] {
            let (record, text) = try openedText(try sealedText(plaintext))
            XCTAssertNil(text, plaintext)
            XCTAssertEqual(record.count, 2, plaintext)
        }
        XCTAssertNil(try openedText(record(#"{"id": "r1", "last_modified": 9, "deleted": true}"#)).1)
    }

    func testStringsAndNumbersSurviveExactly() throws {
        let text = #"{"id": "r1", "s": "é\u0000\ud83d\ude00\"", "big": 9007199254740993, "neg0": -0.0, "f": 1.5e300, "e": {}}"#
        XCTAssertEqual(try open(try sealed(text)), try record(text))
    }
}
