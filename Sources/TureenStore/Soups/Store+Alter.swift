import TureenCore

/// alterSoup and reIndexSoup.
///
/// An alter first commits its intent (tureen_long_ops), then rebuilds the soup
/// in one transaction that also deletes the intent. Killed before that commit,
/// the transaction rolls back, the old soup is intact, and the next open redoes
/// the alter from the recorded intent; killed after, it is done. So after any
/// crash the next open ends with the new specs and every entry.
extension Store {
    public func alterSoup(_ name: String, specs: [IndexSpec], reindex: Bool) throws {
        try IndexSpec.validateCount(specs)
        try refuseEngineSoup(name, "altered")
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

    /// The whole alter; the caller holds a transaction. Kept specs keep their
    /// storage. A new spec with reindex becomes a computed index: SQLite
    /// builds an index over the entry expression, reading every row but
    /// rewriting none (rewriting 1 KB rows re-encrypts every page and is what
    /// bounds a column-based alter). Without reindex it gets a new, NULL
    /// column (SmartStore's "not found until reindexed"). Dropped specs lose
    /// their SQL index; their column stays, unread.
    private func finishAlter(_ c: Connection, opId: Int64, name: String, specs: [IndexSpec], reindex: Bool) throws {
        let old = try catalog.soup(name, c)
        capture.markAltered(old.id)  // the same entries, but queries may now find others
        var nextColumn = try nextColumnNumber(c, old)
        var indexes: [SoupIndex] = []
        var added: [SoupIndex] = []
        for spec in specs {
            if let kept = old.indexes.first(where: { $0.spec == spec }) {
                indexes.append(kept)
                continue
            }
            let i = SoupIndex(spec: spec, column: Soup.columnName(soupId: old.id, position: nextColumn), computed: reindex)
            nextColumn += 1
            if !i.computed {
                try c.execute("ALTER TABLE \(old.table) ADD COLUMN \(i.column) \(spec.type.columnType)")
            }
            indexes.append(i)
            added.append(i)
        }
        let new = Soup(id: old.id, name: name, indexes: indexes)
        for i in old.indexes where !specs.contains(i.spec) { try SoupSchema.dropIndex(c, i) }
        for i in added { try SoupSchema.createIndex(c, new, i) }
        if old.indexes.filter({ $0.spec.type == .fullText }).map({ $0.column })
            != new.indexes.filter({ $0.spec.type == .fullText }).map({ $0.column }) {
            if let fts = old.ftsTable { try c.execute("DROP TABLE \(fts)") }
            try SoupSchema.createFullText(c, new)
        }
        try SoupCatalog.writeSpecs(c, new)
        try deleteLongOp(c, opId)
    }

    /// Column numbers (and so SQL index names) are never reused, so a dropped
    /// spec's stale values can never be read as a new spec's.
    private func nextColumnNumber(_ c: Connection, _ soup: Soup) throws -> Int {
        let s = try c.prepare("PRAGMA table_info(\(soup.table))")
        var names = soup.indexes.map { $0.column }  // computed ones have no column
        while try s.step() { names.append(s.text(1) ?? "") }
        let prefix = soup.table + "_"
        return names.reduce(0) { next, name in
            guard name.hasPrefix(prefix), let n = Int(name.dropFirst(prefix.count)) else { return next }
            return max(next, n + 1)
        }
    }

    /// Fills stored `columns` from every entry with tureen_index_value, in one pass.
    private func computeColumns(_ c: Connection, _ soup: Soup, _ columns: [SoupIndex]) throws {
        let sets = columns.map { "\($0.column) = \(IndexFunction.name)(soup, ?, ?)" }
        let u = try c.prepare("UPDATE \(soup.table) SET \(sets.joined(separator: ", "))")
        for (n, i) in columns.enumerated() {
            u.bind(2 * n + 1, i.spec.path)
            u.bind(2 * n + 2, i.spec.type.rawValue)
        }
        try u.step()
    }

    /// Recomputes the index columns of `paths` from every entry's JSON.
    public func reindexSoup(_ name: String, paths: [String]) throws {
        try withConnection { c in
            try c.transaction {
                let soup = try catalog.soup(name, c)
                var targets: [SoupIndex] = []
                for p in paths {
                    let found = soup.indexes.filter { $0.spec.path.hasSameBytes(as: p) }
                    if found.isEmpty { throw TureenError.invalid("'\(p)' is not an indexed path of soup '\(name)'") }
                    targets += found.filter { f in !targets.contains { $0.column == f.column } }
                }
                // Computed indexes are always current: SQLite maintains them.
                let stored = targets.filter { !$0.computed }
                if !stored.isEmpty { try capture.withoutFeed(c) { try computeColumns(c, soup, stored) } }
                if let fts = soup.ftsTable, targets.contains(where: { $0.spec.type == .fullText }) {
                    try c.execute("DROP TABLE \(fts)")
                    try SoupSchema.createFullText(c, soup)
                }
            }
        }
    }
}
