/// Index queries: a page of entries, a count, and removal of every match.
extension Store {
    /// SQLite reports a bad MATCH expression or SQL as a generic error while
    /// stepping; to the caller that is a query error.
    func asQueryError<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let e as TureenError where e.code == .internal {
            throw TureenError(.query, e.message)
        }
    }

    public func query(_ q: QuerySpec, pageIndex: Int) throws -> JSONWriter {
        guard pageIndex >= 0 else { throw TureenError(.query, "page_index must be 0 or more") }
        let (offset, overflow) = pageIndex.multipliedReportingOverflow(by: q.pageSize)
        guard !overflow else { throw TureenError(.query, "page_index \(pageIndex) is out of range") }
        return try withQuery { c in
            if q.kind == .smart || q.selectPaths != nil { return try queryRows(c, q, offset: offset) }
            let (soup, version) = try catalog.soupAndVersion(q.soupName ?? "", c)
            let shape = QueryShape(q, soupId: soup.id, catalogVersion: version)
            let s: Statement
            let keys: [SQLValue]
            if let prepared = c.pageStatements[shape] {
                // The shape was built and checked for this catalog version:
                // only the keys are new.
                s = prepared
                keys = try QuerySQL.keys(q, soup)
            } else {
                let sql = try QuerySQL(q, soup)
                let t = soup.table
                s = try c.prepare("SELECT \(t).id, \(t).soup, \(t).lastModified FROM \(sql.from)\(sql.whereClause)\(sql.orderClause) LIMIT ? OFFSET ?")
                if c.pageStatements.count >= Connection.pageStatementLimit { c.pageStatements.removeAll() }
                c.pageStatements[shape] = s
                keys = sql.params
            }
            defer { s.reset() }
            QuerySQL.bind(keys, s)
            s.bind(keys.count + 1, Int64(q.pageSize))
            s.bind(keys.count + 2, Int64(offset))
            let budget = queryMemoryBytes
            let out = JSONWriter(reserving: 4096)
            out.appendRaw("[")
            // Room for the page at once, guessed from its first entry: growing
            // by halves copied a page of ten 1 KB entries three times. The
            // "]" and the host's NUL need the last two bytes.
            var first = true
            while try s.step() {
                if first { first = false } else { out.append(UInt8(ascii: ",")) }
                let before = out.count
                EntryText.write(stored: s.textBytes(1), id: s.int64(0), modified: s.int64(2), into: out)
                if before == 1 {
                    // A quarter more per entry, as entries differ in size.
                    let row = out.count - before
                    let (rest, overflow) = (row + row / 4 + 1).multipliedReportingOverflow(by: q.pageSize - 1)
                    out.reserve(extra: overflow || rest >= Store.pageReserveLimit ? Store.pageReserveLimit : rest + 2)
                }
                try QueryMemory.holdPage(out.count, to: budget)
            }
            out.appendRaw("]")
            return out
        }
    }

    /// The most a page reserves ahead from its first entry's size; past it
    /// the page grows as it is written.
    static let pageReserveLimit = 1 << 20

    public func count(_ q: QuerySpec) throws -> Int64 {
        try withQuery { c in
            if q.kind == .smart { return try countSmart(c, q) }
            let soup = try catalog.soup(q.soupName ?? "", c)
            let sql = try QuerySQL(q, soup)
            let s = try c.cached("SELECT count(*) FROM \(sql.countFrom)\(sql.whereClause)")
            defer { s.reset() }
            sql.bind(s)
            return try s.step() ? s.int64(0) : 0
        }
    }

    /// Removes every entry the query matches (not one page), in one
    /// transaction. The ids are gathered first, so no table is read and
    /// written by the same statement.
    @discardableResult
    public func removeByQuery(_ q: QuerySpec) throws -> Int {
        if q.kind == .smart || q.selectPaths != nil {
            throw TureenError(.query, "remove_by_query takes all, exact, range, like or match queries without selectPaths")
        }
        try Store.refuseEngineSoup(q.soupName, "written")
        return try asQueryError { try withConnection { c in
            try c.transaction {
                let soup = try catalog.soup(q.soupName ?? "", c)
                let sql = try QuerySQL(q, soup)
                let s = try c.prepare("SELECT \(soup.table).id FROM \(sql.from)\(sql.whereClause)")
                sql.bind(s)
                var ids: [Int64] = []
                while try s.step() { ids.append(s.int64(0)) }
                s.reset()
                try Store.deleteEntries(c, soup, ids)
                return ids.count
            }
        } }
    }
}
