import TureenCore

/// Parses a JSON array of entry ids, as retrieve and remove take them.
public enum EntryIdList {
    /// Ids per statement, below SQLite's limit of 999 bound parameters.
    static let chunk = 500

    public static func parse(_ text: String) throws -> [Int64] {
        guard case .array(let items) = try JSONParser.parse(text) else {
            throw TureenError.invalid("ids must be a JSON array of integers")
        }
        return try items.enumerated().map { i, v in
            guard let id = v.int64Value else { throw TureenError.invalid("id \(i) is \(v.typeName), not an integer") }
            return id
        }
    }

    static func placeholders(_ n: Int) -> String {
        Array(repeating: "?", count: n).joined(separator: ",")
    }
}

extension Store {
    /// The entries with these ids, in the order asked for; missing ids are
    /// skipped. The answer is held to `query_memory_mb` past its first
    /// entry, which always comes (an entry too large for a query's page can
    /// still be read): an id may be asked for any number of times, so a
    /// short list can name a terabyte.
    public func retrieve(soup name: String, ids: [Int64]) throws -> JSONWriter {
        try retrieve(soup: name, count: ids.count) { _, _ in { ids[$0] } }
    }

    /// `retrieve` of `count` entries, the i-th found by `finder(c, soup)(i)`
    /// (nil: skipped), all in one read transaction.
    func retrieve(soup name: String, count: Int,
                  _ finder: (Connection, Soup) throws -> (Int) throws -> Int64?) throws -> JSONWriter {
        let budget = queryMemoryBytes
        return try withReader { c in
            try c.transaction(immediate: false) {
                let soup = try catalog.soup(name, c)
                let find = try finder(c, soup)
                // One lookup per id, each row spliced straight into the
                // result: no buffer or map in between (an IN list gathered
                // the rows first, then copied them out again in the order
                // asked for, which cost more than the lookups it saved).
                let s = try c.cached("SELECT soup, lastModified FROM \(soup.table) WHERE id = ?")
                // Reserved as a page is (Store.pageReserveLimit at most): a
                // million ids must not reserve 128 MB before one is found.
                let out = JSONWriter(reserving: min(count * 128 + 2, Store.pageReserveLimit))
                out.appendRaw("[")
                var first = true
                for i in 0..<count {
                    guard let id = try find(i) else { continue }
                    s.bind(1, id)
                    defer { s.reset() }
                    guard try s.step() else { continue }
                    if first { first = false } else { out.appendRaw(",") }
                    let before = out.count
                    EntryText.write(stored: s.textBytes(0), id: id, modified: s.int64(1), into: out)
                    if before > 1 { try QueryMemory.holdPage(out.count, to: budget, of: "the retrieve") }
                }
                out.appendRaw("]")
                return out
            }
        }
    }

    /// Removes the entries with these ids in one transaction; unknown ids are ignored.
    public func remove(soup name: String, ids: [Int64]) throws {
        try refuseEngineSoup(name, "written")
        return try withConnection { c in
            try c.transaction { try Store.deleteEntries(c, try catalog.soup(name, c), ids) }
        }
    }

    /// Deletes entries and their full-text rows; the caller holds a transaction.
    static func deleteEntries(_ c: Connection, _ soup: Soup, _ ids: [Int64]) throws {
        guard let capture = c.changeCapture else { return try deleteRows(c, soup, ids) }
        try capture.deleting(c, soup, ids: ids) { try deleteRows(c, soup, ids) }
    }

    private static func deleteRows(_ c: Connection, _ soup: Soup, _ ids: [Int64]) throws {
        var start = 0
        while start < ids.count {
            let part = ids[start..<min(start + EntryIdList.chunk, ids.count)]
            for table in [soup.table] + (soup.ftsTable.map { [$0] } ?? []) {
                let key = table == soup.table ? "id" : "docid"
                let s = try c.cached("DELETE FROM \(table) WHERE \(key) IN (\(EntryIdList.placeholders(part.count)))")
                defer { s.reset() }
                for (n, id) in part.enumerated() { s.bind(n + 1, id) }
                try s.step()
            }
            start += part.count
        }
    }
}
