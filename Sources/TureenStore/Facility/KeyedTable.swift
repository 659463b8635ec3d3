import TureenCore

/// A table an engine owns beside the soups, keyed by one integer column
/// (an id of the engine's own, a soup's id): declared by the engine at run time, its SQL
/// written by the store. Rows are read and written through KeyedRecords.
/// A table appears the first time the engine writes it (`create`), so a
/// store made before it lacks it: reads check `exists` first.
public final class KeyedTable: Sendable {
    public let name: String
    public let key: String
    public let columns: [EngineColumn]

    public init(_ name: String, key: String, columns: [EngineColumn]) {
        self.name = name
        self.key = key
        self.columns = columns
        isPlain = ([name, key] + columns.map(\.name)).allSatisfy(EngineColumn.isPlainName)
    }

    /// Whether every name is plain (see EngineColumn); the facility
    /// refuses to write SQL from a declaration that is not.
    let isPlain: Bool

    var createSQL: String {
        "CREATE TABLE IF NOT EXISTS \(name) (\(key) INTEGER PRIMARY KEY\(columns.map { ", " + $0.definition }.joined()))"
    }
}

/// The rows of a KeyedTable inside a transaction (writes need a write one).
public struct KeyedRecords {
    let connection: Connection
    let table: KeyedTable
    let writes: Bool

    private enum Operation: Int {
        case get, put, delete, matching
    }

    private func select(_ names: [String]) throws -> ColumnSelection {
        try ColumnSelection(names, declared: table.columns, keyName: table.key, table: table.name)
    }

    private func statement(_ op: Operation, _ columns: UInt64, _ extra: UInt64 = 0, _ sql: () -> String) throws -> Statement {
        try plain()
        return try connection.engineStatement(EngineStatementKey(table: ObjectIdentifier(table), operation: op.rawValue,
                                                                 columns: columns, extra: extra), owner: table, sql)
    }

    private func plain() throws {
        guard table.isPlain else { throw TureenError(.internal, "keyed table \(table.name): a name that is not plain") }
    }

    private func requireWrite() throws {
        try StoreTransaction(connection: connection, writes: writes).requireWrite(table.name)
    }

    /// Creates the table where the store lacks it.
    public func create() throws {
        try requireWrite()
        try plain()
        try connection.execute(table.createSQL)
    }

    /// Whether the store has the table.
    public func exists() throws -> Bool {
        try connection.hasTable(table.name)
    }

    /// Row `key`'s `columns`, or nil.
    public func get(_ key: Int64, _ columns: [String]) throws -> [EngineValue]? {
        let c = try select(columns)
        let s = try statement(.get, c.code) {
            "SELECT \(c.names.joined(separator: ", ")) FROM \(table.name) WHERE \(table.key) = ?"
        }
        defer { s.reset() }
        s.bind(1, key)
        return try s.step() ? try s.engineValues(c.columns, from: 0) : nil
    }

    /// Writes row `key` with `values`, in place of any row of that key.
    public func put(_ key: Int64, _ values: [(String, EngineValue)]) throws {
        try requireWrite()
        let c = try select(values.map(\.0))
        let vs = values.map(\.1)
        let s = try statement(.put, c.code, nextMask(vs)) {
            let exprs = vs.enumerated().map { engineValueSQL($1, column: c.names[$0], table: table.name, parameter: 2 + $0) }
            return "INSERT OR REPLACE INTO \(table.name) (\(([table.key] + c.names).joined(separator: ", "))) VALUES (\((["?1"] + exprs).joined(separator: ", ")))"
        }
        defer { s.reset() }
        s.bind(1, key)
        for (i, v) in vs.enumerated() { s.bind(2 + i, v) }
        _ = try s.step()
    }

    /// Deletes row `key`, only where it also holds `matching`'s values.
    public func delete(_ key: Int64, matching: [(String, EngineValue)] = []) throws {
        try requireWrite()
        let c = try select(matching.map(\.0))
        let s = try statement(.delete, c.code) {
            let conditions = ["\(table.key) = ?1"] + c.names.enumerated().map { "\($1) = ?\(2 + $0)" }
            return "DELETE FROM \(table.name) WHERE \(conditions.joined(separator: " AND "))"
        }
        defer { s.reset() }
        s.bind(1, key)
        for (i, v) in matching.enumerated() { s.bind(2 + i, v.1) }
        _ = try s.step()
    }

    /// The rows where any of `anyOf`'s columns holds its value (the key
    /// may be among them), by key.
    public func rows(_ columns: [String], whereAnyOf anyOf: [(String, EngineValue)]) throws -> [EngineRow] {
        let c = try select(columns)
        let w = try select(anyOf.map(\.0))
        let s = try statement(.matching, c.code, w.code) {
            let conditions = w.names.enumerated().map { "\($1) = ?\(1 + $0)" }
            return "SELECT \(([table.key] + c.names).joined(separator: ", ")) FROM \(table.name) WHERE \(conditions.joined(separator: " OR ")) ORDER BY \(table.key)"
        }
        defer { s.reset() }
        for (i, v) in anyOf.enumerated() { s.bind(1 + i, v.1) }
        var out: [EngineRow] = []
        while try s.step() { out.append(EngineRow(key: s.int64(0), values: try s.engineValues(c.columns, from: 1))) }
        return out
    }
}

extension StoreTransaction {
    /// The rows of an engine's keyed table.
    public func keyed(_ table: KeyedTable) -> KeyedRecords {
        KeyedRecords(connection: connection, table: table, writes: writes)
    }
}
