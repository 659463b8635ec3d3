/// Index queries: a page of entries, a count, and removal of every match.
extension Store {
    public func query(_ q: QuerySpec, pageIndex: Int) throws -> [UInt8] {
        guard pageIndex >= 0 else { throw TureenError(.query, "page_index must be 0 or more") }
        let (offset, overflow) = pageIndex.multipliedReportingOverflow(by: q.pageSize)
        guard !overflow else { throw TureenError(.query, "page_index \(pageIndex) is out of range") }
        return try withReader { c in
            let soup = try catalog.soup(q.soupName ?? "", c)
            let sql = try QuerySQL(q, soup)
            let s = try c.cached("SELECT id, soup, lastModified FROM \(soup.table)\(sql.whereClause)\(sql.orderClause) LIMIT ? OFFSET ?")
            defer { s.reset() }
            sql.bind(s)
            s.bind(sql.params.count + 1, Int64(q.pageSize))
            s.bind(sql.params.count + 2, Int64(offset))
            var out = JSONWriter(reserving: 4096)
            out.appendRaw("[")
            var first = true
            while try s.step() {
                if first { first = false } else { out.appendRaw(",") }
                EntryText.write(stored: s.textBytes(1), id: s.int64(0), modified: s.int64(2), into: &out)
            }
            out.appendRaw("]")
            return out.bytes
        }
    }

    public func count(_ q: QuerySpec) throws -> Int64 {
        try withReader { c in
            let soup = try catalog.soup(q.soupName ?? "", c)
            let sql = try QuerySQL(q, soup)
            let s = try c.cached("SELECT count(*) FROM \(soup.table)\(sql.whereClause)")
            defer { s.reset() }
            sql.bind(s)
            return try s.step() ? s.int64(0) : 0
        }
    }

    /// Removes every entry the query matches (not one page), in one transaction.
    @discardableResult
    public func removeByQuery(_ q: QuerySpec) throws -> Int {
        try withConnection { c in
            try c.transaction {
                let soup = try catalog.soup(q.soupName ?? "", c)
                let sql = try QuerySQL(q, soup)
                if let fts = soup.ftsTable {
                    let f = try c.prepare("DELETE FROM \(fts) WHERE docid IN (SELECT id FROM \(soup.table)\(sql.whereClause))")
                    sql.bind(f)
                    try f.step()
                }
                let d = try c.prepare("DELETE FROM \(soup.table)\(sql.whereClause)")
                sql.bind(d)
                try d.step()
                return c.changes
            }
        }
    }
}
