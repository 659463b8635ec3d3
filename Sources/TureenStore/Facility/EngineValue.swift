import TureenCore

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
