import TureenCore

/// The soups of a store and their index specs, read from the metadata tables
/// and cached until the catalog version in tureen_meta changes. Every
/// register, alter and drop bumps it in its transaction, so a change from
/// this handle or any other is seen by the next call (SQLite's own
/// schema_version misses changes that touch no schema, like reordering specs).
public final class SoupCatalog: @unchecked Sendable {
    // Unchecked: `version` and `soups` are touched only under `lock`.
    private let lock = Lock()
    private var version: Int64 = -1
    private var soups: [String: Soup] = [:]

    static func createTables(_ c: Connection) throws {
        try c.execute("CREATE TABLE IF NOT EXISTS tureen_soups (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL UNIQUE)")
        try c.execute("""
            CREATE TABLE IF NOT EXISTS tureen_soup_indexes (soup_id INTEGER NOT NULL, position INTEGER NOT NULL,
              path TEXT NOT NULL, type TEXT NOT NULL, column_name TEXT NOT NULL, computed INTEGER NOT NULL DEFAULT 0,
              PRIMARY KEY (soup_id, position))
            """)
        // Operations that must finish even if the process dies (alter): the
        // intent is committed first and redone by the next open.
        try c.execute("CREATE TABLE IF NOT EXISTS tureen_long_ops (id INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL, soup TEXT NOT NULL, details TEXT NOT NULL)")
    }

    /// Soup names: a letter or underscore, then letters, digits, '_', '-' or
    /// '.', at most 100 characters. They appear in Smart SQL as {name}.
    public static func validateName(_ name: String, kind: String = "soup") throws {
        let u = Array(name.utf8)
        func isAlpha(_ c: UInt8) -> Bool { (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x5F }
        func isDigit(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x39 }
        guard let first = u.first else { throw TureenError.invalid("the \(kind) name is empty") }
        guard u.count <= 100, isAlpha(first), u.allSatisfy({ isAlpha($0) || isDigit($0) || $0 == 0x2D || $0 == 0x2E }) else {
            throw TureenError.invalid("malformed \(kind) name '\(name)': use a letter or '_' then letters, digits, '_', '-' or '.' (at most 100)")
        }
    }

    private func refresh(_ c: Connection) throws {
        let v: Int64
        if let read = c.snapshotCatalogVersion {
            v = read
        } else {
            let read = try c.frequent(.catalogVersion)
            v = try read.step() ? read.int64(0) : 0
            read.reset()
        }
        if v == version { return }
        var loaded: [Int64: (String, [(Int, SoupIndex)])] = [:]
        let s = try c.prepare("SELECT id, name FROM tureen_soups")
        while try s.step() { loaded[s.int64(0)] = (s.text(1) ?? "", []) }
        let i = try c.prepare("SELECT soup_id, position, path, type, column_name, computed FROM tureen_soup_indexes")
        while try i.step() {
            guard let type = IndexType(rawValue: i.text(3) ?? "") else {
                throw TureenError(.corrupt, "unknown index type '\(i.text(3) ?? "")' in the soup metadata")
            }
            let index = SoupIndex(spec: IndexSpec(path: i.text(2) ?? "", type: type), column: i.text(4) ?? "", computed: i.int64(5) != 0)
            loaded[i.int64(0)]?.1.append((Int(i.int64(1)), index))
        }
        soups = [:]
        for (id, (name, indexes)) in loaded {
            soups[name] = Soup(id: id, name: name, indexes: indexes.sorted { $0.0 < $1.0 }.map { $0.1 })
        }
        version = v
    }

    /// The soup and the catalog version it was read at (what the SQL of a
    /// query over it depends on), read together.
    func soupAndVersion(_ name: String, _ c: Connection) throws -> (Soup, Int64) {
        try lock.withLock {
            try refresh(c)
            guard let s = soups[name] else { throw TureenError(.notFound, "no soup named '\(name)'") }
            return (s, version)
        }
    }

    func find(_ name: String, _ c: Connection) throws -> Soup? {
        try lock.withLock {
            try refresh(c)
            return soups[name]
        }
    }

    func soup(_ name: String, _ c: Connection) throws -> Soup {
        try soupAndVersion(name, c).0
    }

    /// The name of the soup with this id, nil when there is none.
    func name(id: Int64, _ c: Connection) -> String? {
        lock.withLock {
            try? refresh(c)
            return soups.values.first { $0.id == id }?.name
        }
    }

    func names(_ c: Connection) throws -> [String] {
        try lock.withLock {
            try refresh(c)
            return soups.keys.sorted()
        }
    }

    /// Marks the catalog changed; the caller is in the changing transaction.
    static func bump(_ c: Connection) throws {
        try c.execute("INSERT OR REPLACE INTO tureen_meta (key, value) VALUES ('catalog_version', "
            + "coalesce((SELECT value FROM tureen_meta WHERE key = 'catalog_version'), 0) + 1)")
    }

    /// Records a soup's specs (replacing earlier ones); the caller is in a transaction.
    static func writeSpecs(_ c: Connection, _ soup: Soup) throws {
        try bump(c)
        let del = try c.prepare("DELETE FROM tureen_soup_indexes WHERE soup_id = ?")
        del.bind(1, soup.id)
        try del.step()
        let ins = try c.prepare("INSERT INTO tureen_soup_indexes (soup_id, position, path, type, column_name, computed) VALUES (?, ?, ?, ?, ?, ?)")
        for (n, i) in soup.indexes.enumerated() {
            ins.reset()
            ins.bind(1, soup.id)
            ins.bind(2, Int64(n))
            ins.bind(3, i.spec.path)
            ins.bind(4, i.spec.type.rawValue)
            ins.bind(5, i.column)
            ins.bind(6, Int64(i.computed ? 1 : 0))
            try ins.step()
        }
    }
}
