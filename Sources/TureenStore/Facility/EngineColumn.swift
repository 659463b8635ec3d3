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
