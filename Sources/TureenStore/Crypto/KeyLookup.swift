import TureenCore

/// Finds an entry by the value one of its soup's indexes holds: upsert's
/// external id, a sync's id field. The statement is prepared once, for a
/// whole batch of lookups.
struct KeyLookup {
    let index: SoupIndex
    /// Where `index` is in `soup.indexes`.
    let position: Int
    /// How the caller calls the path, for messages ("external id path").
    let role: String
    private let statement: Statement

    /// Refuses a path that is not a string, integer or floating index: a
    /// full-text one holds words, not the value a record is named by.
    init(_ c: Connection, _ soup: Soup, path: String, role: String) throws {
        guard let idx = soup.index(path: path), idx.spec.type != .fullText,
              let at = soup.indexes.firstIndex(where: { $0.column == idx.column }) else {
            throw TureenError.invalid("\(role) '\(path)' is not a string, integer or floating index of soup '\(soup.name)'")
        }
        index = idx
        position = at
        self.role = role
        statement = try c.cached("SELECT id FROM \(soup.table) WHERE \(idx.sql) = ? LIMIT 2")
    }

    /// Refuses an entry that has no value at the path.
    func require(_ value: SQLValue) throws {
        if value == .null {
            throw TureenError.invalid("it has no \(index.spec.type.rawValue) value at \(role) '\(index.spec.path)'")
        }
    }

    /// The entry whose index holds `value`; CONSTRAINT when several do.
    func id(of value: SQLValue) throws -> Int64? {
        try require(value)
        let s = statement
        defer { s.reset() }
        value.bind(s, 1)
        guard try s.step() else { return nil }
        let id = s.int64(0)
        if try s.step() {
            throw TureenError(.constraint, "several entries match \(role) '\(index.spec.path)'")
        }
        return id
    }

    /// The entry named by `key`, a record id as the app gives it (converted
    /// as the index converts the values it holds); nil for a key the index
    /// cannot hold, as null.
    func id(key: JSON) throws -> Int64? {
        let value = IndexValue.ofKey(key, type: index.spec.type)
        return value == .null ? nil : try id(of: value)
    }
}
