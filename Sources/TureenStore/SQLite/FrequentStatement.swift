import TureenCore

/// Statements nearly every call runs: transaction control and the catalog
/// check. Each connection keeps them in fixed slots; found in the statement
/// cache by their text instead, each use hashed the SQL (about a thousand
/// instructions, three times per index query).
enum FrequentStatement: Int, CaseIterable {
    case begin, beginImmediate, commit, rollback
    case savepoint, release, rollbackToSavepoint
    case catalogVersion, dataVersion

    var sql: String {
        switch self {
        case .begin: return "BEGIN"
        case .beginImmediate: return "BEGIN IMMEDIATE"
        case .commit: return "COMMIT"
        case .rollback: return "ROLLBACK"
        case .savepoint: return "SAVEPOINT tureen_nested"
        case .release: return "RELEASE tureen_nested"
        case .rollbackToSavepoint: return "ROLLBACK TO tureen_nested"
        case .catalogVersion: return "SELECT coalesce((SELECT value FROM tureen_meta WHERE key = 'catalog_version'), 0)"
        // One row, so that a step leaves it mid-run (see Connection.snapshot).
        case .dataVersion: return "PRAGMA data_version"
        }
    }
}
