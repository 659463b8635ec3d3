import TureenCore

/// What an engine's statement does, to find it prepared again: which
/// table, which operation, and which columns in which order (four bits a
/// column, its place in the declaration plus one). An engine runs some
/// once per record it takes from a server; hashing these words instead of
/// the SQL text saves most of the lookup (see `Connection.cached(literal:)`).
struct EngineStatementKey: Hashable {
    let table: ObjectIdentifier
    let operation: Int
    let columns: UInt64
    let extra: UInt64
}

/// The columns a call names, checked against the declaration.
struct ColumnSelection {
    let columns: [EngineColumn]
    let code: UInt64

    /// `names` among `declared`; `keyName` stands for the table's key
    /// (given the place after the declared columns). At most 14 columns.
    init(_ names: [String], declared: [EngineColumn], keyName: String, table: String) throws {
        var cols: [EngineColumn] = []
        var code: UInt64 = 0
        guard names.count <= 15, declared.count < 15 else {
            throw TureenError(.internal, "too many columns named for table \(table)")
        }
        for (i, n) in names.enumerated() {
            let place: Int
            if n == keyName {
                place = declared.count
                cols.append(EngineColumn(keyName, .integer))
            } else if let p = declared.firstIndex(where: { $0.name == n }) {
                place = p
                cols.append(declared[p])
            } else {
                throw TureenError(.internal, "table \(table) has no column '\(n)'")
            }
            code |= UInt64(place + 1) << (4 * UInt64(i))
        }
        columns = cols
        self.code = code
    }

    var names: [String] { columns.map(\.name) }
}

extension Connection {
    /// The engine statement `key`, prepared from `sql()` the first time.
    /// The caller must reset it when done, as with `cached`. `owner`, the
    /// table whose identity is in the key, is kept with the statement, so
    /// that no other table can take its address while the key is cached.
    func engineStatement(_ key: EngineStatementKey, owner: AnyObject, _ sql: () -> String) throws -> Statement {
        if let found = engineStatements[key] {
            found.statement.reset()
            return found.statement
        }
        let s = try prepare(sql())
        engineStatements[key] = (owner, s)
        return s
    }

    /// Whether the store has table `name` (an engine's table that stores
    /// made before it lack).
    func hasTable(_ name: String) throws -> Bool {
        let s = try cached(literal: "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?")
        defer { s.reset() }
        s.bind(1, name)
        _ = try s.step()
        return s.int64(0) == 1
    }
}

extension Statement {
    /// Binds `v` at `i`; `.next` binds nothing (its SQL computes it).
    func bind(_ i: Int, _ v: EngineValue) {
        switch v {
        case .null: bindNull(i)
        case .integer(let n): bind(i, n)
        case .text(let s): bind(i, s)
        case .json(let j): bind(i, JSONWriter.string(j))
        case .next: break
        }
    }

    /// Column `col` read as `kind` says; NULL is `.null`.
    func engineValue(_ col: Int, _ kind: EngineColumn.Kind) throws -> EngineValue {
        if columnType(col) == 5 /* SQLITE_NULL */ { return .null }
        switch kind {
        case .integer: return .integer(int64(col))
        case .text: return .text(text(col) ?? "")
        case .json: return .json(try JSONParser.parse(bytes: textBytes(col)))
        }
    }

    func engineValues(_ columns: [EngineColumn], from first: Int) throws -> [EngineValue] {
        try columns.enumerated().map { try engineValue(first + $0.offset, $0.element.kind) }
    }
}

/// The SQL of a value being written: a parameter, or for `.next` the
/// column's largest value plus one.
func engineValueSQL(_ v: EngineValue, column: String, table: String, parameter: Int) -> String {
    v == .next ? "(SELECT coalesce(max(\(column)), 0) + 1 FROM \(table))" : "?\(parameter)"
}

/// The `.next` values among `values`, one bit each, for a statement's key.
func nextMask(_ values: [EngineValue]) -> UInt64 {
    values.enumerated().reduce(0) { $0 | ($1.element == .next ? 1 << UInt64($1.offset) : 0) }
}
