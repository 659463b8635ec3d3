/// A registered soup as stored: its table, and one column per index spec.
///
/// Table and column names are generated (TABLE_<id>, TABLE_<id>_<n>), never
/// taken from soup names or paths, so no user string is ever spliced into SQL.
public struct Soup: Sendable {
    public let id: Int64
    public let name: String
    public let indexes: [SoupIndex]

    public var table: String { "TABLE_\(id)" }
    public var ftsTable: String? { hasFullText ? "TABLE_\(id)_fts" : nil }
    public var hasFullText: Bool { indexes.contains { $0.spec.type == .fullText } }
    public var specs: [IndexSpec] { indexes.map { $0.spec } }

    public func index(path: String) -> SoupIndex? {
        indexes.first { $0.spec.path == path && $0.spec.type != .fullText } ?? indexes.first { $0.spec.path == path }
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
    public let column: String
    public let segments: [Substring]

    init(spec: IndexSpec, column: String) {
        self.spec = spec
        self.column = column
        self.segments = spec.path.split(separator: ".", omittingEmptySubsequences: false)
    }

    /// This index's value for an entry, by the rules in IndexValue.
    func value(of entry: JSON) -> SQLValue {
        IndexValue.of(entry, segments: segments, type: spec.type)
    }
}
