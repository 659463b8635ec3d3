/// The keys of a target's `"encryption": {"keys": [{"id": "k2", "key":
/// "<64 hex>"}, ...]}`: the first seals, every one opens, so that a key can
/// be rotated in by listing it first while records sealed under the old
/// one still open.
///
/// A key's id travels in clear in every envelope, so it is restricted to
/// 1–32 letters, digits, '-', '_' and '.': too short to hold a key pasted
/// into the wrong member. No message here quotes a value
/// of the member: a key pasted in the wrong place must not reach a log.
package struct EnvelopeKeys: Sendable {
    package struct Key: Sendable {
        package let id: String
        /// Used three ways, each under its own domain prefix: record AES-GCM (AAD "tureen record v1"),
        /// blob keys (HMAC "tureen blob v1") and blob server names (HMAC "tureen blob name v1").
        package let secret: SecretKey
    }

    /// Never empty; the first is the one that seals.
    package let all: [Key]

    package var sealing: Key { all[0] }

    package func key(id: String) -> Key? {
        all.first { $0.id.hasSameBytes(as: id) }
    }

    /// Keys given as they are (ids checked as when parsed).
    package init(_ keys: [Key]) throws {
        guard !keys.isEmpty else { throw TureenError.invalid("encryption: \"keys\" must list at least one key") }
        for (i, k) in keys.enumerated() {
            guard EnvelopeKeys.isValidId(k.id) else { throw TureenError.invalid("encryption: keys[\(i)].id \(EnvelopeKeys.idRule)") }
            guard k.secret.count == AESGCM.keySize else {
                throw TureenError.invalid("encryption: keys[\(i)].key must be \(AESGCM.keySize * 2) hex digits (a 256-bit key)")
            }
            if let j = keys[..<i].firstIndex(where: { $0.id.hasSameBytes(as: k.id) }) {
                throw TureenError.invalid("encryption: keys[\(i)] has the same id as keys[\(j)]")
            }
        }
        all = keys
    }

    /// The value of a target's "encryption" member.
    package init(parsing member: JSON) throws {
        guard let o = member.objectValue else { throw TureenError.invalid("encryption must be an object with a \"keys\" array") }
        guard o.count == 1, let list = o["keys"] else {
            throw TureenError.invalid("encryption must hold exactly one member, \"keys\"")
        }
        guard let entries = list.arrayValue else { throw TureenError.invalid("encryption: \"keys\" must be an array") }
        var keys: [Key] = []
        for (i, entry) in entries.enumerated() {
            guard let e = entry.objectValue, e.count == 2, let id = e["id"], let key = e["key"] else {
                throw TureenError.invalid("encryption: keys[\(i)] must be an object with exactly \"id\" and \"key\"")
            }
            guard let idText = id.stringValue else { throw TureenError.invalid("encryption: keys[\(i)].id must be a string") }
            guard let hex = key.stringValue, let secret = EnvelopeKeys.secret(hex: hex) else {
                throw TureenError.invalid("encryption: keys[\(i)].key must be \(AESGCM.keySize * 2) hex digits (a 256-bit key)")
            }
            keys.append(Key(id: idText, secret: secret))
        }
        try self.init(keys)
    }

    static let idRule = "must be 1 to 32 letters, digits, '-', '_' or '.'"

    package static func isValidId(_ id: String) -> Bool {
        let u = id.utf8
        return (1...32).contains(u.count) && u.allSatisfy { c in
            (c >= 0x30 && c <= 0x39) || (c | 0x20 >= 0x61 && c | 0x20 <= 0x7A) || c == 0x2D || c == 0x5F || c == 0x2E
        }
    }

    /// The key that `hex` spells, decoded straight into its own wiped memory.
    static func secret(hex: String) -> SecretKey? {
        let digits = hex.utf8
        guard digits.count == AESGCM.keySize * 2 else { return nil }
        return try? SecretKey(count: AESGCM.keySize) { out in
            var i = 0
            var high: UInt8 = 0
            for c in digits {
                guard let v = nibble(c) else { throw TureenError.invalid("not hex") }
                if i % 2 == 0 { high = v } else { out[i / 2] = high << 4 | v }
                i += 1
            }
        }
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: return c - 0x30
        case 0x61...0x66: return c - 0x61 + 10
        case 0x41...0x46: return c - 0x41 + 10
        default: return nil
        }
    }
}
