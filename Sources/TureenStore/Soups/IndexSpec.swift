import TureenCore

/// The kind of an index, as named in index specs.
public enum IndexType: String, Sendable, CaseIterable {
    case string, integer, floating
    case fullText = "full_text"

    /// The SQLite column affinity that stores the converted value.
    var columnType: String {
        switch self {
        case .string, .fullText: return "TEXT"
        case .integer: return "INTEGER"
        case .floating: return "REAL"
        }
    }
}

/// One index spec: a dotted path into the entry and how to index its value.
public struct IndexSpec: Equatable, Hashable, Sendable {
    public let path: String
    public let type: IndexType

    public init(path: String, type: IndexType) {
        self.path = path
        self.type = type
    }

    /// Paths match by their bytes, as an entry's member names do (see
    /// ExactString): an index on "café" spelled NFC does not read, or
    /// stand in for, a member or path spelled NFD.
    public static func == (a: IndexSpec, b: IndexSpec) -> Bool { a.type == b.type && a.path.hasSameBytes(as: b.path) }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(ExactString(path))
        hasher.combine(type)
    }

    public var json: JSON { .object(JSONObject([("path", .string(path)), ("type", .string(type.rawValue))])) }

    /// Parses `[{"path": ..., "type": ...}, ...]`. An empty list, an unknown
    /// type, a malformed path or the same path and type twice is INVALID.
    public static func parseList(_ text: String, allowEmpty: Bool = false) throws -> [IndexSpec] {
        guard case .array(let items) = try JSONParser.parse(text) else {
            throw TureenError.invalid("index specs must be a JSON array of {\"path\", \"type\"} objects")
        }
        if items.isEmpty && !allowEmpty { throw TureenError.invalid("a soup needs at least one index spec") }
        var specs: [IndexSpec] = []
        for (i, item) in items.enumerated() {
            guard case .object(let o) = item else { throw TureenError.invalid("index spec \(i) is not an object") }
            for k in o.keys where k != "path" && k != "type" {
                throw TureenError.invalid("index spec \(i) has an unknown member '\(k)'")
            }
            guard let path = o["path"]?.stringValue else { throw TureenError.invalid("index spec \(i) has no string \"path\"") }
            try validatePath(path, what: "index spec \(i)")
            guard let t = o["type"]?.stringValue else { throw TureenError.invalid("index spec \(i) has no string \"type\"") }
            guard let type = IndexType(rawValue: t) else {
                throw TureenError.invalid("index spec \(i) has unknown type '\(t)'; types are string, integer, floating, full_text")
            }
            let spec = IndexSpec(path: path, type: type)
            if specs.contains(spec) { throw TureenError.invalid("index spec \(i) repeats path '\(path)' with type \(t)") }
            specs.append(spec)
        }
        return specs
    }

    /// Index columns a soup may have. Each is a column of the soup's table
    /// and a bound value of every upsert, and SQLite allows 999 of those
    /// (SQLITE_MAX_VARIABLE_NUMBER); past them every upsert failed, so the
    /// soup is refused before it exists.
    public static let maxPerSoup = 900

    /// A soup's specs: at least one, at most `maxPerSoup`.
    static func validateCount(_ specs: [IndexSpec]) throws {
        guard !specs.isEmpty else { throw TureenError.invalid("a soup needs at least one index spec") }
        guard specs.count <= maxPerSoup else {
            throw TureenError.invalid("a soup may have at most \(maxPerSoup) index specs; \(specs.count) were given")
        }
    }

    /// Paths are dot-separated, case-sensitive member names. Empty segments and
    /// the characters that delimit Smart SQL references are refused.
    public static func validatePath(_ path: String, what: String) throws {
        guard !path.isEmpty else { throw TureenError.invalid("\(what): the path is empty") }
        guard path.utf8.count <= 1000 else { throw TureenError.invalid("\(what): the path is longer than 1000 bytes") }
        for c in path.unicodeScalars where c == "{" || c == "}" || c == ":" || c.value < 0x20 {
            throw TureenError.invalid("\(what): path '\(path)' contains a character paths cannot hold ('{', '}', ':' or a control character)")
        }
        if path.split(separator: ".", omittingEmptySubsequences: false).contains(where: { $0.isEmpty }) {
            throw TureenError.invalid("\(what): path '\(path)' has an empty segment")
        }
    }
}
