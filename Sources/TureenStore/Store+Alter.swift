/// alterSoup and reIndexSoup.
///
/// An alter first commits its intent (tureen_long_ops), then rebuilds the soup
/// in one transaction that also deletes the intent. Killed before that commit,
/// the transaction rolls back, the old soup is intact, and the next open redoes
/// the alter from the recorded intent; killed after, it is done. So after any
/// crash the next open ends with the new specs and every entry.
extension Store {
    public func alterSoup(_ name: String, specs: [IndexSpec], reindex: Bool) throws {
        guard !specs.isEmpty else { throw TureenError.invalid("a soup needs at least one index spec") }
        try withConnection { c in
            _ = try catalog.soup(name, c)
            var details = JSONObject()
            details["specs"] = .array(specs.map { $0.json })
            details["reindex"] = .bool(reindex)
            let opId: Int64 = try c.transaction {
                let s = try c.prepare("INSERT INTO tureen_long_ops (kind, soup, details) VALUES ('alter', ?, ?)")
                s.bind(1, name)
                s.bind(2, JSONWriter.string(.object(details)))
                try s.step()
                return c.lastInsertRowid
            }
            do {
                try c.transaction { try finishAlter(c, opId: opId, name: name, specs: specs, reindex: reindex) }
            } catch {
                // A failure that is not a crash: forget the intent, keep the old soup.
                _ = try? c.transaction { try deleteLongOp(c, opId) }
                throw error
            }
        }
    }

    /// Redoes alters whose process died before they committed. Called by open.
    func resumeLongOperations() throws {
        try withConnection { c in
            var pending: [(Int64, String, String)] = []
            let s = try c.prepare("SELECT id, soup, details FROM tureen_long_ops WHERE kind = 'alter' ORDER BY id")
            while try s.step() { pending.append((s.int64(0), s.text(1) ?? "", s.text(2) ?? "")) }
            s.reset()
            for (id, soup, details) in pending {
                do {
                    let d = try JSONParser.parse(details)
                    let specs = try IndexSpec.parseList(JSONWriter.string(d["specs"] ?? .null))
                    try c.transaction { try finishAlter(c, opId: id, name: soup, specs: specs, reindex: d["reindex"]?.boolValue ?? false) }
                } catch let e as TureenError where e.code == .busy || e.code == .io {
                    throw e  // transient: keep the intent for the next open
                } catch {
                    // The soup was dropped or the intent cannot be applied: the
                    // alter never returned success, so dropping it loses nothing.
                    try c.transaction { try deleteLongOp(c, id) }
                }
            }
        }
    }

    private func deleteLongOp(_ c: Connection, _ id: Int64) throws {
        let d = try c.prepare("DELETE FROM tureen_long_ops WHERE id = ?")
        d.bind(1, id)
        try d.step()
    }

    /// The whole rebuild; the caller holds a transaction.
    private func finishAlter(_ c: Connection, opId: Int64, name: String, specs: [IndexSpec], reindex: Bool) throws {
        let old = try catalog.soup(name, c)
        let new = Soup.make(id: old.id, name: name, specs: specs)
        let oldTable = old.table + "_old"
        // Indexes keep their names across a rename: drop them so the new table can use them.
        let idx = try c.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL")
        idx.bind(1, old.table)
        var indexNames: [String] = []
        while try idx.step() { indexNames.append(idx.text(0) ?? "") }
        idx.reset()
        for n in indexNames { try c.execute("DROP INDEX \(n)") }
        if let fts = old.ftsTable { try c.execute("DROP TABLE \(fts)") }
        try c.execute("ALTER TABLE \(old.table) RENAME TO \(oldTable)")
        try SoupSchema.create(c, new)

        // Each new column comes from the old column of the same spec, else is
        // computed from the entry (reindex) or left NULL.
        let sources: [String?] = new.indexes.map { n in old.indexes.first { $0.spec == n.spec }?.column }
        let computed = new.indexes.indices.filter { sources[$0] == nil && reindex }
        let base = ["id", "soup", "created", "lastModified"]
        let newCols = (base + new.indexes.map { $0.column }).joined(separator: ", ")
        if computed.isEmpty {
            let select = (base + sources.map { $0 ?? "NULL" }).joined(separator: ", ")
            try c.execute("INSERT INTO \(new.table) (\(newCols)) SELECT \(select) FROM \(oldTable)")
        } else {
            let select = (base + sources.map { $0 ?? "NULL" }).joined(separator: ", ")
            let read = try c.prepare("SELECT \(select) FROM \(oldTable)")
            let write = try c.prepare("INSERT INTO \(new.table) (\(newCols)) VALUES (\(EntryIdList.placeholders(base.count + new.indexes.count)))")
            while try read.step() {
                write.reset()
                for col in 0..<(base.count + new.indexes.count) { copyColumn(read, col, to: write) }
                let entry = try JSONParser.parse(bytes: read.textBytes(1))
                for k in computed { new.indexes[k].value(of: entry).bind(write, base.count + k + 1) }
                try write.step()
            }
        }
        try c.execute("DELETE FROM sqlite_sequence WHERE name = '\(new.table)'")
        try c.execute("INSERT INTO sqlite_sequence (name, seq) SELECT '\(new.table)', seq FROM sqlite_sequence WHERE name = '\(oldTable)'")
        try c.execute("DROP TABLE \(oldTable)")
        try SoupSchema.createIndexes(c, new)
        try SoupCatalog.writeSpecs(c, new)
        try deleteLongOp(c, opId)
    }

    private func copyColumn(_ from: Statement, _ col: Int, to: Statement) {
        let i = col + 1
        switch from.columnType(col) {
        case 1: to.bind(i, from.int64(col))      // SQLITE_INTEGER
        case 2: to.bind(i, from.double(col))     // SQLITE_FLOAT
        case 5: to.bindNull(i)                   // SQLITE_NULL
        default: to.bind(i, bytes: Array(from.textBytes(col)))
        }
    }

    /// Recomputes the index columns of `paths` from every entry's JSON.
    public func reindexSoup(_ name: String, paths: [String]) throws {
        try withConnection { c in
            try c.transaction {
                let soup = try catalog.soup(name, c)
                var targets: [Int] = []
                for p in paths {
                    let found = soup.indexes.indices.filter { soup.indexes[$0].spec.path == p }
                    if found.isEmpty { throw TureenError.invalid("'\(p)' is not an indexed path of soup '\(name)'") }
                    targets += found.filter { !targets.contains($0) }
                }
                if targets.isEmpty { return }
                let sets = targets.map { "\(soup.indexes[$0].column) = ?" }.joined(separator: ", ")
                let read = try c.prepare("SELECT id, soup FROM \(soup.table)")
                let write = try c.prepare("UPDATE \(soup.table) SET \(sets) WHERE id = ?")
                while try read.step() {
                    write.reset()
                    let entry = try JSONParser.parse(bytes: read.textBytes(1))
                    for (n, k) in targets.enumerated() { soup.indexes[k].value(of: entry).bind(write, n + 1) }
                    write.bind(targets.count + 1, read.int64(0))
                    try write.step()
                }
                if let fts = soup.ftsTable, targets.contains(where: { soup.indexes[$0].spec.type == .fullText }) {
                    let cols = soup.indexes.filter { $0.spec.type == .fullText }.map { $0.column }.joined(separator: ", ")
                    try c.execute("DELETE FROM \(fts)")
                    try c.execute("INSERT INTO \(fts) (docid, \(cols)) SELECT id, \(cols) FROM \(soup.table)")
                }
            }
        }
    }
}
