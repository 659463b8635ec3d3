import TureenCore

/// Smart SQL queries and selectPaths: results as rows of JSON values.
extension Store {
    /// Translates and checks a smart query: one statement, read-only, with as
    /// many `?` as args. Returns the statement alone, ready to be wrapped.
    func smartSQL(_ c: Connection, _ q: QuerySpec) throws -> String {
        let sql = try SmartSQL(q.smartSql ?? "", catalog: { try catalog.find($0, c) }).sql
        let key = ExactString(sql)
        let checked: (wrapped: String, parameters: Int)
        if let known = c.checkedSmartSQL[key] {
            checked = known
        } else {
            // Smart SQL runs wrapped in a SELECT, where any other statement
            // the guard lets through (PRAGMA page_size, allowed for FTS4)
            // failed with an odd message.
            let word = SmartSQL.firstWord(sql)
            if !word.isEmpty && !["SELECT", "WITH", "VALUES"].contains(word) {
                throw TureenError(.query, "Smart SQL must be a single SELECT (or WITH ... SELECT, or VALUES); this one starts with \(word)")
            }
            let (stmt, more, length) = try c.readOnly {
                do {
                    return try c.prepareFirst(sql)
                } catch let e as TureenError {
                    throw TureenError(.query, "Smart SQL: \(e.message) (only a single read-only SELECT may run)")
                }
            }
            if more { throw TureenError(.query, "Smart SQL holds more than one statement") }
            if !stmt.isReadOnly { throw TureenError(.query, "Smart SQL may only read") }
            // The statement alone, without a final ';' (or what follows it), so
            // it can be wrapped; newlines keep a trailing -- comment inside.
            var first = Array(sql.utf8.prefix(length))
            while let last = first.last, last == UInt8(ascii: ";") || last == 0x20 || last == 0x0A || last == 0x0D || last == 0x09 {
                first.removeLast()
            }
            checked = ("\n" + String(decoding: first, as: UTF8.self) + "\n", stmt.parameterCount)
            try refuseInternalReads(c, checked.wrapped)
            if c.checkedSmartSQL.count > 200 { c.checkedSmartSQL.removeAll() }
            c.checkedSmartSQL[key] = checked
        }
        if checked.parameters != q.args.count {
            throw TureenError(.query, "Smart SQL has \(checked.parameters) parameter(s) but \"args\" gives \(q.args.count)")
        }
        return checked.wrapped
    }

    /// Refuses Smart SQL whose plan opens a b-tree of Tureen's or SQLite's
    /// own tables. The authorizer sees every column read, but SQLite 3.15
    /// does not consult it for a table read without a column (count(*)
    /// of 'tureen_soups'), so the plan's OpenRead instructions, which name
    /// every b-tree the statement reads by its root page, are checked too.
    private func refuseInternalReads(_ c: Connection, _ sql: String) throws {
        var ownPages: Set<Int64> = [1]  // sqlite_master
        let pages = try c.cached("""
            SELECT rootpage FROM sqlite_master
            WHERE tbl_name LIKE 'tureen\\_%' ESCAPE '\\' OR tbl_name LIKE 'sqlite\\_%' ESCAPE '\\'
            """)
        defer { pages.reset() }
        while try pages.step() { ownPages.insert(pages.int64(0)) }
        let plan = try c.readOnly { try c.prepare("EXPLAIN " + sql) }
        while try plan.step() {
            let opcode = plan.text(1)
            // p3 is the database: 0 is main (temp holds no table of Tureen's).
            if opcode == "OpenRead" || opcode == "ReopenIdx", plan.int64(4) == 0, ownPages.contains(plan.int64(3)) {
                throw TureenError(.query, "Smart SQL may only read soups, not Tureen's or SQLite's own tables")
            }
        }
    }

    func bindArgs(_ s: Statement, _ args: [JSON]) {
        for (n, v) in args.enumerated() {
            switch v {
            case .string(let t): s.bind(n + 1, t)
            case .int(let i): s.bind(n + 1, i)
            case .double(let d): s.bind(n + 1, d)
            case .bool(let b): s.bind(n + 1, Int64(b ? 1 : 0))
            default: s.bindNull(n + 1)
            }
        }
    }

    /// A page of a smart query, or of an entry query with selectPaths, as rows.
    /// Smart SQL is read-only while it prepares and while it steps (the
    /// translation before, which reads Tureen's catalog, is not).
    func queryRows(_ c: Connection, _ q: QuerySpec, offset: Int) throws -> JSONWriter {
        if q.kind == .smart {
            let sql = try smartSQL(c, q)
            return try c.readOnly { try rows(c, q, smart: sql, offset: offset) }
        }
        return try rows(c, q, smart: nil, offset: offset)
    }

    private func rows(_ c: Connection, _ q: QuerySpec, smart: String?, offset: Int) throws -> JSONWriter {
        let s: Statement
        if let sql = smart {
            s = try c.cached("SELECT * FROM (\(sql)) LIMIT ? OFFSET ?")
            bindArgs(s, q.args)
            s.bind(q.args.count + 1, Int64(q.pageSize))
            s.bind(q.args.count + 2, Int64(offset))
        } else {
            let soup = try catalog.soup(q.soupName ?? "", c)
            let sql = try QuerySQL(q, soup)
            let columns = try (q.selectPaths ?? []).map {
                try SmartSQL.expression($0, soup: soup, owner: soup.table, where: "selectPaths")
            }
            s = try c.cached("SELECT \(columns.joined(separator: ", ")) FROM \(sql.from)\(sql.whereClause)\(sql.orderClause) LIMIT ? OFFSET ?")
            sql.bind(s)
            s.bind(sql.params.count + 1, Int64(q.pageSize))
            s.bind(sql.params.count + 2, Int64(offset))
        }
        defer { s.reset() }
        let n = s.columnCount
        let out = JSONWriter(reserving: 4096)
        out.appendRaw("[")
        var first = true
        let budget = queryMemoryBytes
        while try s.step() {
            if first { first = false } else { out.appendRaw(",") }
            ResultRows.write(s, columns: n, into: out)
            try QueryMemory.holdPage(out.count, to: budget)
        }
        out.appendRaw("]")
        return out
    }

    func countSmart(_ c: Connection, _ q: QuerySpec) throws -> Int64 {
        let sql = try smartSQL(c, q)
        return try c.readOnly {
            let s = try c.cached("SELECT count(*) FROM (\(sql))")
            defer { s.reset() }
            bindArgs(s, q.args)
            return try s.step() ? s.int64(0) : 0
        }
    }
}
