import Glibc
import TureenCore

/// How an entry refers to a blob, anywhere in its JSON:
/// `{"@type": "blob", "digest": "sha256-<64 hex>", "length": N, "content_type": "..."}`
/// (Couchbase Lite's blob dictionary, with SmartStore's snake-case keys).
public struct BlobRef: Hashable, Sendable {
    public static let typeKey = "@type"
    public static let typeName = "blob"
    public static let digestPrefix = digestPrefixBytes.description
    public static let defaultContentType = "application/octet-stream"

    public let digest: String
    public let length: Int64
    public let contentType: String

    public init(digest: String, length: Int64, contentType: String?) {
        self.digest = digest
        self.length = length
        self.contentType = contentType ?? BlobRef.defaultContentType
    }

    /// The name of the blob whose SHA-256 is `hash`.
    public static func digest(of hash: [UInt8]) -> String { digestPrefix + Hex.string(hash) }

    /// The 64 hex digits of a digest, checked: only lowercase hex of the
    /// right length names a blob, so nothing else reaches SQL or a URL.
    public static func hex(ofDigest d: String) throws -> Substring {
        guard d.hasPrefix(digestPrefix) else {
            throw TureenError.invalid("'\(d.prefix(80))' is not a blob digest: it must be \"sha256-\" and 64 lowercase hex digits")
        }
        let hex = d.dropFirst(digestPrefix.count)
        guard hex.utf8.count == 64, hex.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else {
            throw TureenError.invalid("'\(d.prefix(80))' is not a blob digest: it must be \"sha256-\" and 64 lowercase hex digits")
        }
        return hex
    }

    public var json: JSON {
        .object(JSONObject([(BlobRef.typeKey, .string(BlobRef.typeName)), ("digest", .string(digest)),
                            ("length", .int(length)), ("content_type", .string(contentType))]))
    }

    public var text: String { JSONWriter.string(json) }

    /// The reference `o` makes, when it is one; a malformed one (a blob
    /// type with a bad digest or length) is an error, not silently data.
    public static func from(_ o: JSONObject) throws -> BlobRef? {
        guard o[typeKey]?.stringValue == typeName else { return nil }
        guard let d = o["digest"]?.stringValue else { throw TureenError.invalid("a blob reference has no \"digest\"") }
        _ = try hex(ofDigest: d)
        guard let n = o["length"]?.int64Value, n >= 0 else {
            throw TureenError.invalid("the blob reference to \(d) has no valid \"length\"")
        }
        return BlobRef(digest: d, length: n, contentType: o["content_type"]?.stringValue)
    }

    /// Every blob `value` refers to, at any depth, each once.
    public static func all(in value: JSON) throws -> [BlobRef] {
        var found: [BlobRef] = []
        var seen = Set<String>()
        func walk(_ v: JSON, depth: Int) throws {
            // The parser already bounds depth; this bound keeps the walk
            // safe for values built in Swift too.
            guard depth < 512 else { return }
            switch v {
            case .object(let o):
                if let r = try from(o) {
                    if seen.insert(r.digest).inserted { found.append(r) }
                    return
                }
                for m in o.members { try walk(m.value, depth: depth + 1) }
            case .array(let a):
                for e in a { try walk(e, depth: depth + 1) }
            default:
                return
            }
        }
        try walk(value, depth: 0)
        return found
    }

    /// A cheap test that text may hold a reference, to skip the walk for
    /// the entries that cannot. It runs on every upserted entry, so libc's
    /// memchr jumps to each "-" that could end the prefix and only the bytes
    /// before it are compared: jumping to each "s" instead stopped some 35
    /// times in a 1 KB English entry.
    public static func mayOccur(in text: UnsafeRawBufferPointer) -> Bool {
        guard let base = text.baseAddress else { return false }
        let needle = digestPrefixBytes.utf8Start
        let last = digestPrefixBytes.utf8CodeUnitCount - 1
        var at = last
        while at < text.count {
            guard let hit = memchr(base + at, Int32(needle[last]), text.count - at) else { return false }
            let offset = base.distance(to: UnsafeRawPointer(hit))
            if memcmp(base + offset - last, needle, last) == 0 { return true }
            at = offset + 1
        }
        return false
    }

    /// `digestPrefix`, as bytes that need no conversion per call.
    static let digestPrefixBytes: StaticString = "sha256-"

    /// Every digest named anywhere in `text`: what blob collection keeps.
    /// Reading the text, not its JSON, errs on the side of keeping.
    public static func digests(inText text: UnsafeBufferPointer<UInt8>, into found: inout Set<String>) {
        scanDigests(text, into: &found)
        // Upsert and sync down write out again text that spells a printable
        // ASCII character with a \u escape (Element.needsRewriting), so
        // that digests are spelled plainly. Stores written before that kept
        // such text as given: its strings are read decoded.
        guard escapesPrintableASCII(text), let value = try? JSONParser.parse(bytes: text) else { return }
        forEachString(in: value) { s in
            var s = s
            s.withUTF8 { scanDigests($0, into: &found) }
        }
    }

    private static func scanDigests(_ text: UnsafeBufferPointer<UInt8>, into found: inout Set<String>) {
        let needle = Array(digestPrefix.utf8)
        let total = needle.count + 64
        var i = 0
        while i + total <= text.count {
            if text[i] == needle[0] && (1..<needle.count).allSatisfy({ text[i + $0] == needle[$0] }) {
                let hex = UnsafeBufferPointer(rebasing: text[(i + needle.count)..<(i + total)])
                if hex.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) {
                    found.insert(String(decoding: UnsafeBufferPointer(rebasing: text[i..<(i + total)]), as: UTF8.self))
                    i += total
                    continue
                }
            }
            i += 1
        }
    }

    /// Whether `text` holds `\u00` and a hex digit from 2 to 7: an escape
    /// of a character from 0x20 to 0x7F, as a digest's are. It may also be
    /// an escaped backslash followed by such letters, which costs a parse.
    static func escapesPrintableASCII(_ text: UnsafeBufferPointer<UInt8>) -> Bool {
        var i = 0
        while i + 5 < text.count {
            if text[i] == UInt8(ascii: "\\") && text[i + 1] == UInt8(ascii: "u") && text[i + 2] == UInt8(ascii: "0")
                && text[i + 3] == UInt8(ascii: "0") && (UInt8(ascii: "2")...UInt8(ascii: "7")).contains(text[i + 4]) {
                return true
            }
            i += 1
        }
        return false
    }

    /// Calls `body` with every member name and string in `value`.
    private static func forEachString(in value: JSON, _ body: (String) -> Void) {
        switch value {
        case .string(let s):
            body(s)
        case .array(let a):
            for e in a { forEachString(in: e, body) }
        case .object(let o):
            for m in o.members {
                body(m.key)
                forEachString(in: m.value, body)
            }
        default:
            return
        }
    }
}
