/// A JSON value. Objects keep their members in document order so that an entry
/// comes back the way the application wrote it.
///
/// Two values are equal when they hold the same data: strings and names by
/// their bytes (ExactString), numbers by their bits, so that 0.0 and -0.0
/// differ, and objects whatever the order of their members. Sync compares
/// a record with what it holds by this, and a change that Swift's String
/// `==` or Double `==` cannot see is still a change.
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

    public static func == (a: JSON, b: JSON) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case let (.bool(x), .bool(y)): return x == y
        case let (.int(x), .int(y)): return x == y
        case let (.double(x), .double(y)): return x.bitPattern == y.bitPattern
        case let (.string(x), .string(y)): return x.hasSameBytes(as: y)
        case let (.array(x), .array(y)): return x == y
        case let (.object(x), .object(y)): return x == y
        default: return false
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
/// members, where a scan beats hashing every key on parse. Names match by
/// their bytes (ExactString).
public struct JSONObject: Equatable, Sendable {
    public private(set) var members: [(key: String, value: JSON)] = []

    public init() {}

    /// A repeated name keeps its first place and takes the last value, as
    /// setting the members one by one would; past `scannedMembers` the names
    /// are found by a dictionary, not a scan per member (a request of
    /// 40,000 query parameters took 20 s, helper 29).
    public init(_ members: [(String, JSON)]) {
        guard members.count > JSONObject.scannedMembers else {
            for (k, v) in members { self[k] = v }
            return
        }
        var at: [ExactString: Int] = [:]
        at.reserveCapacity(members.count)
        self.members.reserveCapacity(members.count)
        for (k, v) in members {
            let name = ExactString(k)
            if let i = at[name] {
                self.members[i].value = v
            } else {
                at[name] = self.members.count
                self.members.append((k, v))
            }
        }
    }

    public var count: Int { members.count }
    public var keys: [String] { members.map { $0.key } }

    public subscript(key: String) -> JSON? {
        get {
            for m in members where m.key.hasSameBytes(as: key) { return m.value }
            return nil
        }
        set {
            if let i = members.firstIndex(where: { $0.key.hasSameBytes(as: key) }) {
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

    /// Makes room for `n` members, for a caller that knows how many it adds.
    public mutating func reserveCapacity(_ n: Int) {
        members.reserveCapacity(n)
    }

    /// Replaces the value of the member at `index` (from `members`).
    mutating func replaceValue(at index: Int, with value: JSON) {
        members[index].value = value
    }

    /// Up to this many members, a name is looked up by a scan; past it, by a
    /// dictionary (`nameIndex`): a scan per member made the parser and the
    /// comparisons below quadratic, so that a hostile record of a few
    /// hundred thousand members held a sync for minutes.
    static let scannedMembers = 16

    /// Each name's position in `members` (the first, for a repeated name,
    /// as the subscript finds it).
    public func nameIndex() -> [ExactString: Int] {
        var index: [ExactString: Int] = [:]
        index.reserveCapacity(members.count)
        for i in members.indices.reversed() { index[ExactString(members[i].key)] = i }  // the first wins
        return index
    }

    /// The member of this name, found with `index` when there is one.
    public func value(_ key: String, index: [ExactString: Int]?) -> JSON? {
        guard let index = index else { return self[key] }
        return index[ExactString(key)].map { members[$0].value }
    }

    /// An index for many lookups by name, or nil when a scan is as quick.
    public func indexForLookups() -> [ExactString: Int]? {
        members.count > JSONObject.scannedMembers ? nameIndex() : nil
    }

    /// Sets (or, for nil, removes) many members at once, as `self[k] = v`
    /// for each would, finding each name through one index instead of a
    /// scan: the changes may come from a server, as large as it likes.
    public mutating func update<S: Sequence>(_ changes: S) where S.Element == (String, JSON?) {
        var index: [ExactString: Int]?  // from the first name past `scannedMembers`
        var removed = Set<Int>()   // with the index: removed at the end, so positions hold
        for (k, v) in changes {
            if index == nil && members.count >= JSONObject.scannedMembers { index = nameIndex() }
            guard index != nil else {
                self[k] = v
                continue
            }
            if let i = index?[ExactString(k)], !removed.contains(i) {
                if let v = v { members[i].value = v } else { removed.insert(i) }
            } else if let v = v {
                index?[ExactString(k)] = members.count
                members.append((k, v))
            }
        }
        if !removed.isEmpty { members = members.indices.filter { !removed.contains($0) }.map { members[$0] } }
    }

    public static func == (a: JSONObject, b: JSONObject) -> Bool {
        guard a.members.count == b.members.count else { return false }
        let index = b.indexForLookups()
        for m in a.members where b.value(m.key, index: index) != m.value { return false }
        return true
    }
}
