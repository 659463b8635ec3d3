import TureenCore

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
        try query(q, pageIndex: pageIndex, on: nil)
    }

    /// `connection`: a reader whose snapshot is already open (the
    /// notifier's), instead of one of the pool.
    func query(_ q: QuerySpec, pageIndex: Int, on connection: Connection?) throws -> JSONWriter {
        guard pageIndex >= 0 else { throw TureenError(.query, "page_index must be 0 or more") }
        let (offset, overflow) = pageIndex.multipliedReportingOverflow(by: q.pageSize)
        guard !overflow else { throw TureenError(.query, "page_index \(pageIndex) is out of range") }
        return try withQuery(on: connection) { c in
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
            return try writePage(s, pageSize: q.pageSize)
        }
    }

    /// The first page of an entry query with an orderPath, looked for only
    /// among the entries `ids`: the same page as `query(q, pageIndex: 0)`
    /// when `ids` holds every entry of that query's last first page and
    /// every entry changed since, none of the page's among them (see
    /// Notifier.rerun). nil when the query is not of that kind or the ids
    /// are too many for one statement.
    func firstPage(_ q: QuerySpec, among ids: Set<Int64>, on connection: Connection?) throws -> JSONWriter? {
        guard q.kind != .smart, q.selectPaths == nil, q.orderPath != nil, !ids.isEmpty, ids.count <= EntryIdList.chunk else {
            return nil
        }
        return try withQuery(on: connection) { c in
            let soup = try catalog.soup(q.soupName ?? "", c)
            let sql = try QuerySQL(q, soup)
            let t = soup.table
            // Lists padded to a power of two (with an id already in them)
            // keep the statements of one query to a handful of sizes.
            var slots = 16
            while slots < ids.count { slots *= 2 }
            let join = sql.whereClause.isEmpty ? " WHERE " : " AND "
            let s = try c.cached("SELECT \(t).id, \(t).soup, \(t).lastModified FROM \(sql.from)\(sql.whereClause)\(join)\(t).id IN (\(EntryIdList.placeholders(slots)))\(sql.orderClause) LIMIT ?")
            defer { s.reset() }
            sql.bind(s)
            var n = sql.params.count
            for id in ids {
                n += 1
                s.bind(n, id)
            }
            let pad = ids.first ?? 0
            while n < sql.params.count + slots {
                n += 1
                s.bind(n, pad)
            }
            s.bind(n + 1, Int64(q.pageSize))
            return try writePage(s, pageSize: q.pageSize)
        }
    }

    /// Writes the rows (id, stored text, lastModified) of a stepped page
    /// statement as a JSON array of entries, held to `query_memory_mb`.
    private func writePage(_ s: Statement, pageSize: Int) throws -> JSONWriter {
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
                let (rest, overflow) = (row + row / 4 + 1).multipliedReportingOverflow(by: pageSize - 1)
                out.reserve(extra: overflow || rest >= Store.pageReserveLimit ? Store.pageReserveLimit : rest + 2)
            }
            try QueryMemory.holdPage(out.count, to: budget)
        }
        out.appendRaw("]")
        return out
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
        try refuseEngineSoup(q.soupName, "written")
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
