import TureenCore

/// SQL text built from trusted pieces. The only user text ever written into
/// SQL (rather than bound) is an index path inside a computed index's
/// expression, because CREATE INDEX cannot take parameters.
enum SQLText {
    /// A string literal: single quotes doubled, which is all SQLite needs.
    /// Paths cannot hold control characters (IndexSpec.validatePath).
    static func literal(_ s: String) -> String {
        var out = "'"
        for c in s { out += c == "'" ? "''" : String(c) }
        return out + "'"
    }
}
