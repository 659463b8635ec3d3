import TureenCore

/// A registered soup as stored: its table, and one column per index spec.
///
/// Table and column names are generated (TABLE_<id>, TABLE_<id>_<n>), never
/// taken from soup names or paths, so no user string is ever spliced into SQL.
public struct Soup: Sendable {
    public let id: Int64
    public let name: String
    public let indexes: [SoupIndex]

    public var table: String { Soup.tableName(id: id) }
    static func tableName(id: Int64) -> String { "TABLE_\(id)" }
    public var ftsTable: String? { hasFullText ? "TABLE_\(id)_fts" : nil }
    public var hasFullText: Bool { indexes.contains { $0.spec.type == .fullText } }
    public var specs: [IndexSpec] { indexes.map { $0.spec } }
    /// The indexes stored in columns of the row (written by upsert).
    var storedIndexes: [SoupIndex] { indexes.filter { !$0.computed } }

    public func index(path: String) -> SoupIndex? {
        indexes.first { $0.spec.path.hasSameBytes(as: path) && $0.spec.type != .fullText } ?? indexes.first { $0.spec.path.hasSameBytes(as: path) }
    }

    static func columnName(soupId: Int64, position: Int) -> String { "TABLE_\(soupId)_\(position)" }

    static func make(id: Int64, name: String, specs: [IndexSpec]) -> Soup {
        Soup(id: id, name: name, indexes: specs.enumerated().map {
            SoupIndex(spec: $0.element, column: columnName(soupId: id, position: $0.offset))
        })
    }
}

public struct SoupIndex: Sendable {
    public let spec: IndexSpec
    /// The index's name in SQL: its column, or for a computed index the
    /// name its SQL index and FTS column are derived from.
    public let column: String
    /// A computed index stores nothing in the row: SQLite indexes the
    /// expression `sql`, evaluated from the entry, and keeps it current on
    /// every write. Alter uses it to add an index without rewriting rows.
    public let computed: Bool
    public let segments: [Substring]

    init(spec: IndexSpec, column: String, computed: Bool = false) {
        self.spec = spec
        self.column = column
        self.computed = computed
        self.segments = spec.path.split(separator: ".", omittingEmptySubsequences: false)
    }

    /// How SQL reads this index's value: the column, or for a computed index
    /// the indexed expression (SQLite matches `t.soup` to the index's `soup`).
    var sql: String { sql(in: nil) }

    func sql(in table: String?) -> String {
        let owner = table.map { "\($0)." } ?? ""
        guard computed else { return owner + column }
        return "\(IndexFunction.name)(\(owner)soup, \(SQLText.literal(spec.path)), '\(spec.type.rawValue)')"
    }

    /// This index's value for an entry, by the rules in IndexValue.
    func value(of entry: JSON) -> SQLValue {
        IndexValue.of(entry, segments: segments, type: spec.type)
    }
}
