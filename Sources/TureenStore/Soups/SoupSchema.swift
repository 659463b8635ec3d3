import TureenCore

/// The DDL of one soup: its table, the SQL index on every index column, and
/// the FTS4 table (rowid = entry id) that mirrors its full_text columns.
enum SoupSchema {
    static func create(_ c: Connection, _ soup: Soup) throws {
        let t = soup.table
        var cols = ["id INTEGER PRIMARY KEY AUTOINCREMENT", "soup TEXT NOT NULL", "created INTEGER NOT NULL", "lastModified INTEGER NOT NULL"]
        cols += soup.storedIndexes.map { "\($0.column) \($0.spec.type.columnType)" }
        try c.execute("CREATE TABLE \(t) (\(cols.joined(separator: ", ")))")
    }

    /// SQL indexes and the FTS table of a new soup.
    static func createIndexes(_ c: Connection, _ soup: Soup) throws {
        let t = soup.table
        try c.execute("CREATE INDEX \(t)_created_idx ON \(t) (created)")
        try c.execute("CREATE INDEX \(t)_lastModified_idx ON \(t) (lastModified)")
        for i in soup.indexes { try createIndex(c, soup, i) }
        try createFullText(c, soup)
    }

    static func createIndex(_ c: Connection, _ soup: Soup, _ i: SoupIndex) throws {
        if i.spec.type != .fullText { try c.execute("CREATE INDEX \(i.column)_idx ON \(soup.table) (\(i.sql))") }
    }

    static func dropIndex(_ c: Connection, _ i: SoupIndex) throws {
        try c.execute("DROP INDEX IF EXISTS \(i.column)_idx")
    }

    /// The FTS4 table mirroring the full_text columns, filled from them.
    static func createFullText(_ c: Connection, _ soup: Soup) throws {
        let t = soup.table
        if let fts = soup.ftsTable {
            let ftsIndexes = soup.indexes.filter { $0.spec.type == .fullText }
            let ftsCols = ftsIndexes.map { $0.column }.joined(separator: ", ")
            try c.execute("CREATE VIRTUAL TABLE \(fts) USING fts4(\(ftsCols))")
            try c.execute("INSERT INTO \(fts) (docid, \(ftsCols)) SELECT id, \(ftsIndexes.map { $0.sql }.joined(separator: ", ")) FROM \(t)")
        }
    }

    static func drop(_ c: Connection, _ soup: Soup) throws {
        if let fts = soup.ftsTable { try c.execute("DROP TABLE IF EXISTS \(fts)") }
        try c.execute("DROP TABLE IF EXISTS \(soup.table)")
    }
}
