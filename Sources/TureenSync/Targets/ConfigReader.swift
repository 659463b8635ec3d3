import TureenStore
import TureenCore

/// Reads a JSON object of settings, member by member, and refuses members it
/// was never asked about: a misspelt option must fail, not be ignored.
struct ConfigReader {
    let object: JSONObject
    let what: String
    private var seen: Set<String> = []

    init(_ value: JSON, _ what: String) throws {
        guard case .object(let o) = value else { throw TureenError.invalid("\(what) must be a JSON object") }
        object = o
        self.what = what
    }

    mutating func raw(_ key: String) -> JSON? {
        seen.insert(key)
        guard let v = object[key], v != .null else { return nil }
        return v
    }

    mutating func string(_ key: String) throws -> String? {
        guard let v = raw(key) else { return nil }
        guard let s = v.stringValue, !s.isEmpty else { throw bad(key, "a non-empty string") }
        return s
    }

    mutating func requiredString(_ key: String) throws -> String {
        guard let s = try string(key) else { throw TureenError.invalid("\(what) needs \"\(key)\"") }
        return s
    }

    mutating func bool(_ key: String) throws -> Bool? {
        guard let v = raw(key) else { return nil }
        guard let b = v.boolValue else { throw bad(key, "true or false") }
        return b
    }

    mutating func int(_ key: String, _ range: ClosedRange<Int>) throws -> Int? {
        guard let v = raw(key) else { return nil }
        guard let i = v.int64Value, range.contains(Int(i)) else { throw bad(key, "an integer in \(range.lowerBound)...\(range.upperBound)") }
        return Int(i)
    }

    mutating func object(_ key: String) throws -> JSON? {
        guard let v = raw(key) else { return nil }
        guard v.objectValue != nil else { throw bad(key, "a JSON object") }
        return v
    }

    mutating func stringMap(_ key: String) throws -> [(String, String)] {
        guard let o = try object(key)?.objectValue else { return [] }
        return try o.members.map { m in
            guard let s = m.value.stringValue else { throw bad(key, "an object of strings") }
            return (m.key, s)
        }
    }

    mutating func stringList(_ key: String) throws -> [String]? {
        guard let v = raw(key) else { return nil }
        guard let a = v.arrayValue else { throw bad(key, "an array of strings") }
        return try a.map { guard let s = $0.stringValue, !s.isEmpty else { throw bad(key, "an array of non-empty strings") }; return s }
    }

    /// Fails on any member not read.
    func finish() throws {
        for k in object.keys where !seen.contains(k) {
            throw TureenError.invalid("unknown \(what) member '\(k)'; known: \(seen.sorted().joined(separator: ", "))")
        }
    }

    func bad(_ key: String, _ expected: String) -> TureenError {
        TureenError.invalid("\(what) member \"\(key)\" must be \(expected)")
    }
}

extension JSON {
    /// The value at a dotted path of objects ("" is the value itself).
    func at(_ path: String) -> JSON? {
        if path.isEmpty { return self }
        var v: JSON = self
        for part in path.split(separator: ".") {
            guard let next = v[String(part)] else { return nil }
            v = next
        }
        return v
    }

    /// This value placed at a dotted path of new objects ("" is the value).
    func wrapped(in path: String) -> JSON {
        path.split(separator: ".").reversed().reduce(self) { inner, key in .object(JSONObject([(String(key), inner)])) }
    }

    var text: String { JSONWriter.string(self) }
}
