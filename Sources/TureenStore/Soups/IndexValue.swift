import TureenCore

/// A value as SQLite stores it in an index column.
public enum SQLValue: Equatable, Sendable {
    case null
    case int(Int64)
    case double(Double)
    case text(String)

    func bind(_ s: Statement, _ i: Int) {
        switch self {
        case .null: s.bindNull(i)
        case .int(let v): s.bind(i, v)
        case .double(let v): s.bind(i, v)
        case .text(let v): s.bind(i, v)
        }
    }
}

/// The conversion rules from a projected JSON value to an index column
/// (documented in tureen.h, "Index specs"):
/// - missing path or JSON null: NULL, in every type;
/// - string: strings as they are; numbers as their JSON text; booleans as
///   "true"/"false"; objects as their JSON text; several values (the path
///   crossed an array) as the JSON array of them;
/// - full_text: as string, but several values are joined by spaces, so that
///   each one is searchable as words;
/// - integer: integers; finite floating numbers truncated toward zero, and
///   beyond the 64-bit range clamped to its nearest limit (SmartStore's Java
///   long conversion); booleans as 1/0; strings holding a finite number,
///   converted the same way; anything else NULL;
/// - floating: numbers; booleans as 1.0/0.0; strings holding a number; else NULL.
/// For integer and floating, a path that crossed an array indexes its value
/// only when it yields exactly one.
public enum IndexValue {
    public static func of(_ entry: JSON, segments: [Substring], type: IndexType) -> SQLValue {
        let (values, crossed) = JSONPath.project(entry, segments)
        return from(values, crossed: crossed, type: type)
    }

    /// The indexed value of a projection (see `JSONPath` and `JSONScanner`).
    public static func from(_ values: [JSON], crossed: Bool, type: IndexType) -> SQLValue {
        if values.isEmpty { return .null }
        if values.count > 1 || (crossed && (type == .string)) {
            switch type {
            case .string:
                let present = values.filter { $0 != .null }
                return present.isEmpty ? .null : .text(JSONWriter.string(.array(values)))
            case .fullText:
                let words = values.compactMap(textOf)
                return words.isEmpty ? .null : .text(words.joined(separator: " "))
            case .integer, .floating:
                return .null
            }
        }
        return single(values[0], type: type)
    }

    /// A query key's value, as `of(key, segments: [], type:)` gives it, but
    /// without building a projection when the key is no array: that array
    /// cost more than the conversion itself, on every page of a query.
    static func ofKey(_ key: JSON, type: IndexType) -> SQLValue {
        if case .array = key { return of(key, segments: [], type: type) }
        return single(key, type: type)
    }

    /// The indexed value of a projection that yielded exactly `v`.
    private static func single(_ v: JSON, type: IndexType) -> SQLValue {
        switch type {
        case .string, .fullText: return textOf(v).map { .text($0) } ?? .null
        case .integer: return integerOf(v).map { .int($0) } ?? .null
        case .floating: return doubleOf(v).map { .double($0) } ?? .null
        }
    }

    static func textOf(_ v: JSON) -> String? {
        switch v {
        case .null: return nil
        case .string(let s): return s
        case .bool(let b): return b ? "true" : "false"
        default: return JSONWriter.string(v)
        }
    }

    static func integerOf(_ v: JSON) -> Int64? {
        switch v {
        case .int(let i): return i
        case .double(let d): return truncate(d)
        case .bool(let b): return b ? 1 : 0
        case .string(let s):
            let t = s.trimmingSpaces
            if let i = Int64(t) { return i }
            return Double(t).flatMap(truncate)
        default: return nil
        }
    }

    static func doubleOf(_ v: JSON) -> Double? {
        switch v {
        case .int(let i): return Double(i)
        case .double(let d): return d
        case .bool(let b): return b ? 1 : 0
        case .string(let s): return Double(s.trimmingSpaces).flatMap { $0.isFinite ? $0 : nil }
        default: return nil
        }
    }

    /// Java's (long) cast, as SmartStore stores a number in an integer index:
    /// toward zero, and beyond the 64-bit range the nearest limit. The bounds
    /// are exactly -2^63 and 2^63 as doubles, so every value between them
    /// converts without trapping.
    private static func truncate(_ d: Double) -> Int64? {
        guard d.isFinite else { return nil }
        if d >= 9_223_372_036_854_775_808.0 { return .max }
        if d <= -9_223_372_036_854_775_808.0 { return .min }
        return Int64(d.rounded(.towardZero))
    }
}

extension String {
    var trimmingSpaces: String {
        let scalars = unicodeScalars
        guard let a = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
              let b = scalars.lastIndex(where: { !$0.properties.isWhitespace }) else { return "" }
        return String(scalars[a...b])
    }
}
