/// A JSON value. Objects keep their members in document order so that an entry
/// comes back the way the application wrote it.
public enum JSON: Equatable, Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSON])
    case object(JSONObject)

    public subscript(key: String) -> JSON? {
        if case .object(let o) = self { return o[key] }
        return nil
    }

    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    public var objectValue: JSONObject? {
        if case .object(let o) = self { return o }
        return nil
    }

    public var arrayValue: [JSON]? {
        if case .array(let a) = self { return a }
        return nil
    }

    public var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    /// An integer value, also from a double that holds a whole number.
    public var int64Value: Int64? {
        switch self {
        case .int(let i): return i
        case .double(let d) where d.rounded() == d && abs(d) < 9.2e18: return Int64(d)
        default: return nil
        }
    }

    public var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "boolean"
        case .int, .double: return "number"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        }
    }
}

/// An insertion-ordered JSON object. Lookups are linear: documents have tens of
/// members, where a scan beats hashing every key on parse.
public struct JSONObject: Equatable, Sendable {
    public private(set) var members: [(key: String, value: JSON)] = []

    public init() {}

    public init(_ members: [(String, JSON)]) {
        for (k, v) in members { self[k] = v }
    }

    public var count: Int { members.count }
    public var keys: [String] { members.map { $0.key } }

    public subscript(key: String) -> JSON? {
        get {
            for m in members where m.key == key { return m.value }
            return nil
        }
        set {
            if let i = members.firstIndex(where: { $0.key == key }) {
                if let v = newValue { members[i].value = v } else { members.remove(at: i) }
            } else if let v = newValue {
                members.append((key, v))
            }
        }
    }

    /// Appends without looking for an existing member; the parser uses it after
    /// it has checked for duplicates itself.
    public mutating func appendUnchecked(_ key: String, _ value: JSON) {
        members.append((key, value))
    }

    public static func == (a: JSONObject, b: JSONObject) -> Bool {
        guard a.members.count == b.members.count else { return false }
        for m in a.members where b[m.key] != m.value { return false }
        return true
    }
}
