import TureenCore

/// A value column of an engine's table (a side table or a keyed one).
/// Names are the engine's constants: they reach the SQL as they are, so
/// the facility refuses any but letters, digits and underscores.
public struct EngineColumn: Sendable {
    public enum Kind: Sendable {
        case integer, text
        /// JSON text, read back parsed.
        case json
    }

    public let name: String
    public let kind: Kind
    public let nullable: Bool

    public init(_ name: String, _ kind: Kind, nullable: Bool = false) {
        self.name = name
        self.kind = kind
        self.nullable = nullable
    }

    /// The column's definition in a CREATE TABLE.
    var definition: String {
        "\(name) \(kind == .integer ? "INTEGER" : "TEXT")\(nullable ? "" : " NOT NULL")"
    }

    static func isPlainName(_ s: String) -> Bool {
        !s.isEmpty && s.utf8.allSatisfy { $0 == 95 || (48...57).contains($0) || (65...90).contains($0) || (97...122).contains($0) }
    }
}

/// A value in an engine's table.
public enum EngineValue: Equatable, Sendable {
    case null
    case integer(Int64)
    case text(String)
    case json(JSON)
    /// When written: one more than the largest value the column holds (1
    /// in an empty table), computed inside the statement. An order kept
    /// this way survives two writes in one millisecond and a clock set back.
    case next

    public var int64Value: Int64? { if case .integer(let i) = self { return i } else { return nil } }
    public var stringValue: String? { if case .text(let s) = self { return s } else { return nil } }
    public var jsonValue: JSON? { if case .json(let j) = self { return j } else { return nil } }
}

/// One row read from an engine's table: its key (an entry id, or the
/// keyed table's key) and the columns asked for, in the order asked.
public struct EngineRow {
    public let key: Int64
    public let values: [EngineValue]
}
