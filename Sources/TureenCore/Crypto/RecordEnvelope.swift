/// A record as an encrypted target's server holds it: the members the
/// server needs stay in clear, everything else is one AES-256-GCM message.
///
///     {"id": "r1", "last_modified": 1700000000000,
///      "enc": {"v": 1, "kid": "k2", "n": "<nonce>", "c": "<ciphertext>"}}
///
/// - `v`: the envelope's version, 1.
/// - `kid`: the id of the key that sealed it (see EnvelopeKeys).
/// - `n`: the 12-byte random nonce, base64.
/// - `c`: the ciphertext of the record's JSON text without `id`,
///   `last_modified` and `deleted`, followed by the 16-byte tag, base64.
///
/// The associated data binds the collection, the record id, the version and
/// the key id, so an envelope copied to another record or collection, or
/// relabelled with another key id, does not open. What it cannot see: a
/// server that answers with an older envelope of the same record (a
/// replay) or withholds records; and the ciphertext's length tells the
/// plaintext's. Nonces are random, so one key should seal fewer than 2^32
/// records (NIST SP 800-38D); rotate before that.
///
/// Tombstones (`"deleted": true`) carry no data and pass through unsealed.
package enum RecordEnvelope {
    package static let member = "enc"
    package static let version: Int64 = 1
    /// What stays in clear, as the server needs it.
    package static let clearMembers = ["id", "last_modified", "deleted"]

    /// The server's form of `record` (the local form, with or without the
    /// clear members), sealed under the first key. `last_modified` and
    /// `deleted` are copied as they are, when present.
    package static func seal(record: JSONObject, id: String, collection: String, keys: EnvelopeKeys) throws -> JSONObject {
        if isTombstone(record) { return tombstone(record, id: id) }
        let body = JSONWriter()
        body.writeObject(members: record.members.lazy.filter { m in !clearMembers.contains { $0.hasSameBytes(as: m.key) } })
        let key = keys.sealing
        let nonce = try SecureRandom.bytes(AESGCM.nonceSize)
        let sealed = try AESGCM.seal(UnsafeRawBufferPointer(body.buffer), key: key.secret, nonce: nonce,
                                     aad: associatedData(id: id, collection: collection, keyId: key.id))
        var out = clear(record, id: id)
        out[member] = .object(JSONObject([
            ("v", .int(version)), ("kid", .string(key.id)),
            ("n", .string(Base64.encode(nonce))), ("c", .string(Base64.encode(sealed))),
        ]))
        return out
    }

    /// The record that `serverRecord` seals, with its clear members put
    /// back: `.corrupt` when it is not a well-formed envelope that opens
    /// for this id and collection, `.key` when none of `keys` has its key
    /// id. Members in clear other than the three are not authenticated and
    /// are dropped.
    package static func open(serverRecord: JSONObject, id: String, collection: String, keys: EnvelopeKeys) throws -> JSONObject {
        try open(serverRecord: serverRecord, id: id, collection: collection, keys: keys, textTo: nil).record
    }

    /// `open`, also appending the opened record's JSON text to `text` and
    /// saying where it lies there: the plaintext the sealer wrote, between
    /// the clear members, so that sync down can store it as it is instead
    /// of writing the record out again. No range for a tombstone, or for a
    /// plaintext whose text says more than its tree
    /// (`JSONParser.Element.needsRewriting`).
    package static func open(serverRecord: JSONObject, id: String, collection: String, keys: EnvelopeKeys,
                             textTo text: JSONWriter?) throws -> (record: JSONObject, text: Range<Int>?) {
        // Only a failure names the record: this runs for every record of a page.
        func what() -> String { "record \(id) of collection \(collection)" }
        if let outsideId = serverRecord["id"], outsideId != .string(id) {
            throw TureenError(.corrupt, "\(what()) came with another id")
        }
        if isTombstone(serverRecord) { return (tombstone(serverRecord, id: id), nil) }
        guard let envelope = serverRecord[member] else {
            throw TureenError(.corrupt, "\(what()) is not encrypted, on a target that encrypts")
        }
        guard let e = envelope.objectValue, e.count == 4, e["v"]?.int64Value == version,
              let kid = e["kid"]?.stringValue, let n = e["n"]?.stringValue, let c = e["c"]?.stringValue
        else { throw TureenError(.corrupt, "\(what()) has a malformed or unknown envelope (version \(version) expected)") }
        guard let key = keys.key(id: kid) else {
            // The key id is the server's text: quoted only when it is a well-formed id.
            let named = EnvelopeKeys.isValidId(kid) ? "\"\(kid)\"" : "an invalid key id"
            throw TureenError(.key, "\(what()) is sealed under \(named), which is not among the target's keys")
        }
        guard let nonce = Base64.decode(n), nonce.count == AESGCM.nonceSize,
              let sealed = Base64.decode(c), sealed.count >= AESGCM.tagSize
        else { throw TureenError(.corrupt, "\(what()) has a truncated or malformed envelope") }
        let opened = try sealed.withUnsafeBytes {
            try AESGCM.open($0, key: key.secret, nonce: nonce, aad: associatedData(id: id, collection: collection, keyId: kid))
        }
        guard let plain = opened else {
            throw TureenError(.corrupt, "\(what()) does not decrypt: its envelope was altered, truncated, or belongs to another record or collection")
        }
        var body: JSON?
        var rewrite = true
        let isArray = try? plain.withUnsafeBufferPointer { b in
            try JSONParser.parseEach(bytes: b) { _, v, element in (body, rewrite) = (v, element.needsRewriting) }
        }
        guard isArray == false, let fields = body?.objectValue,
              !fields.members.contains(where: { m in clearMembers.contains { $0.hasSameBytes(as: m.key) } })
        else { throw TureenError(.corrupt, "\(what()) decrypts to something other than a record's fields") }
        var out = JSONObject([("id", .string(id))])
        out.reserveCapacity(fields.count + 3)
        for m in fields.members { out.appendUnchecked(m.key, m.value) }
        for name in clearMembers.dropFirst() { if let v = serverRecord[name] { out.appendUnchecked(name, v) } }
        guard let text, !rewrite else { return (out, nil) }
        let start = text.count
        text.appendRaw("{\"id\":")
        text.writeString(id)
        plain.withUnsafeBufferPointer { b in
            let inner = innerText(ofObject: b)
            guard !inner.isEmpty else { return }
            text.append(UInt8(ascii: ","))
            text.appendRaw(bytes: inner)
        }
        for name in clearMembers.dropFirst() {
            guard let v = serverRecord[name] else { continue }
            text.append(UInt8(ascii: ","))
            text.writeString(name)
            text.append(UInt8(ascii: ":"))
            text.write(v)
        }
        text.append(UInt8(ascii: "}"))
        return (out, start..<text.count)
    }

    /// The members of `object`, the text of one JSON object, without its
    /// braces and the space inside them; empty for an object without any.
    private static func innerText(ofObject object: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
        func isSpace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 }
        var lo = 0, hi = object.count
        while lo < hi && isSpace(object[lo]) { lo += 1 }
        while hi > lo && isSpace(object[hi - 1]) { hi -= 1 }
        // Past the braces.
        lo += 1
        hi -= 1
        while lo < hi && isSpace(object[lo]) { lo += 1 }
        while hi > lo && isSpace(object[hi - 1]) { hi -= 1 }
        return UnsafeBufferPointer(rebasing: object[lo..<max(lo, hi)])
    }

    /// The id of the key that sealed `serverRecord`, nil when it is no envelope.
    package static func keyId(of serverRecord: JSONObject) -> String? {
        serverRecord[member]?["kid"]?.stringValue
    }

    /// Whether `serverRecord` should be sealed again under `keys.sealing`:
    /// it is sealed under another key, or (not a tombstone) not sealed at all.
    package static func needsReencrypt(_ serverRecord: JSONObject, under keys: EnvelopeKeys) -> Bool {
        if isTombstone(serverRecord) { return false }
        guard let kid = keyId(of: serverRecord) else { return true }
        return !kid.hasSameBytes(as: keys.sealing.id)
    }

    static func isTombstone(_ record: JSONObject) -> Bool {
        record["deleted"] == .bool(true)
    }

    private static func tombstone(_ record: JSONObject, id: String) -> JSONObject {
        var out = clear(record, id: id)
        out["deleted"] = .bool(true)
        return out
    }

    /// `id`, then `last_modified` and `deleted` as `record` has them.
    private static func clear(_ record: JSONObject, id: String) -> JSONObject {
        var out = JSONObject([("id", .string(id))])
        for name in clearMembers.dropFirst() { if let v = record[name] { out.appendUnchecked(name, v) } }
        return out
    }

    /// Each part length-prefixed, so that no two (collection, id, key id)
    /// triples give the same bytes.
    static func associatedData(id: String, collection: String, keyId: String) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(aadPrefix.count + 12 + collection.utf8.count + id.utf8.count + keyId.utf8.count)
        out += aadPrefix
        func add(_ part: String) {
            let n = UInt32(truncatingIfNeeded: part.utf8.count)
            for shift in stride(from: 24, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: n >> shift)) }
            out += part.utf8
        }
        add(collection)
        add(id)
        add(keyId)
        return out
    }

    private static let aadPrefix = Array("tureen record v\(version)".utf8)
}
