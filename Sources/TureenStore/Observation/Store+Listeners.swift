import TureenCore

/// Soup listeners and live queries: what a commit changed, told to the host.
extension Store {
    private var notifier: Notifier {
        get throws {
            try notifierLock.withLock {
                if let n = notifierIfMade { return n }
                guard writerIsOpen else { throw TureenError.misuse("the store '\(path)' is closed") }
                let n = Notifier(store: self)
                notifierIfMade = n
                ChangeHub.join(n, path: canonicalPath)
                return n
            }
        }
    }

    /// Calls `callback` with each commit's changes to `soup` (every soup when
    /// nil), on the store's notification thread. Returns the listener's id.
    public func listen(soup: String?, _ callback: @escaping (String) -> Void, release: (() -> Void)?) throws -> Int {
        if let s = soup { try SoupCatalog.validateName(s) }
        return try notifier.add(.soup(soup), callback, release: release)
    }

    /// Calls `callback` with the first page of `spec` now, and again after
    /// every commit that changes that page, on the notification thread.
    public func liveQuery(_ spec: QuerySpec, _ callback: @escaping (String) -> Void, release: (() -> Void)?) throws -> Int {
        let soups = try soupsRead(by: spec)
        return try notifier.add(.live(spec, soups: soups), callback, release: release)
    }

    /// Calls `callback` with the text of each engine event whose code is in
    /// `codes` (every code when nil), on the notification thread, in the
    /// order published. The store carries the events; engines give them
    /// their meaning.
    public func listenEngineEvents(codes: Set<String>?, _ callback: @escaping (String) -> Void, release: (() -> Void)?) throws -> Int {
        try notifier.add(.engine(codes), callback, release: release)
    }

    /// Whether an engine listener of this handle wants events with `code`.
    public func wantsEngineEvent(_ code: String) -> Bool {
        notifierLock.withLock { notifierIfMade }?.wantsEngineEvent(code) ?? false
    }

    /// Queues an engine event for this handle's engine listeners; they hear
    /// it on the notification thread, after the commits published before it.
    public func publishEngineEvent(code: String, text: String) {
        notifierLock.withLock { notifierIfMade }?.enqueue(.engine(code: code, text: text))
    }

    /// Removes a listener; see Notifier.remove.
    public func removeListener(_ id: Int) throws {
        guard let n = notifierLock.withLock({ notifierIfMade }) else {
            throw TureenError.misuse("the listener was already removed")
        }
        try n.remove(id)
    }

    /// The soups a query reads: its soup, or every soup its Smart SQL names.
    /// The query is checked here, so a bad one fails at registration.
    func soupsRead(by spec: QuerySpec) throws -> Set<String> {
        try withReader { c in
            if spec.kind != .smart {
                _ = try catalog.soup(spec.soupName ?? "", c)
                return [spec.soupName ?? ""]
            }
            var names = Set<String>()
            _ = try SmartSQL(spec.smartSql ?? "", catalog: { name in
                names.insert(name)
                return try catalog.find(name, c)
            })
            _ = try smartSQL(c, spec)
            return names
        }
    }

    /// Hands what the writer's transactions committed to the listeners of
    /// every handle of this file; the caller holds the write lock, so the
    /// commits of one handle go out in order.
    func publishCommitted(_ c: Connection) {
        let commits = capture.takeCommitted()
        guard !commits.isEmpty else { return }
        var out: [[SoupChange]] = []
        for (origin, deltas) in commits {
            let changes = deltas.sorted { $0.key < $1.key }.compactMap { id, d -> SoupChange? in
                guard let name = d.droppedName ?? catalog.name(id: id, c) else { return nil }
                return d.change(soup: name, origin: origin)
            }
            if !changes.isEmpty { out.append(changes) }
        }
        if !out.isEmpty { ChangeHub.publish(path: canonicalPath, from: ObjectIdentifier(self), out) }
    }

    /// For each entry query of one soup, whether any of the entries `ids`
    /// matches it now (its conditions, not its page): a live query whose
    /// page held none of them need not re-run when none matches. nil where
    /// a query cannot be asked (its index is gone): it then re-runs.
    ///
    /// One statement reads each changed entry once and tests it against
    /// every query: a statement per query searched the soup's index again
    /// for each, which with 100 live queries was most of the notification
    /// thread's work per commit. A match joins the FTS table, so it is asked
    /// alone.
    func anyMatches(_ specs: [QuerySpec], ids: [Int64], on c: Connection) throws -> [Bool?] {
        var found = [Bool?](repeating: false, count: specs.count)
        guard let name = specs.first?.soupName, !ids.isEmpty else { return found }
        let soup = try catalog.soup(name, c)
        var together: [(at: Int, sql: QuerySQL)] = []
        for (i, q) in specs.enumerated() {
            guard let sql = try? QuerySQL(q, soup) else {
                found[i] = nil
                continue
            }
            if q.kind == .match {
                found[i] = try anyMatches(sql, ids: ids, on: c)
            } else {
                together.append((i, sql))
            }
        }
        // Well below SQLite's 999 bound parameters with the ids: each
        // statement takes at most 400 keys and 256 ids.
        var groups: [[(at: Int, sql: QuerySQL)]] = []
        var keys = 0
        for q in together {
            if groups.isEmpty || keys + q.sql.params.count > 400 || groups[groups.count - 1].count == 100 {
                groups.append([])
                keys = 0
            }
            groups[groups.count - 1].append(q)
            keys += q.sql.params.count
        }
        for group in groups {
            var start = 0
            while start < ids.count, group.contains(where: { found[$0.at] == false }) {
                let part = ids[start..<min(start + 256, ids.count)]
                // Padded to a power of two with the last id again, so that a
                // handful of statements serve every count (each is cached).
                var slots = 1
                while slots < part.count { slots *= 2 }
                // max() of none is NULL: no changed entry is left to match.
                let tests = group.map { "max(\($0.sql.condition.isEmpty ? "1" : $0.sql.condition))" }
                let s = try c.cached("SELECT \(tests.joined(separator: ", ")) FROM \(soup.table) WHERE \(soup.table).id IN (\(EntryIdList.placeholders(slots)))")
                defer { s.reset() }
                var n = 1
                for q in group {
                    q.sql.bind(s, from: n)
                    n += q.sql.params.count
                }
                for k in 0..<slots { s.bind(n + k, part[min(part.startIndex + k, part.endIndex - 1)]) }
                if try s.step() {
                    for (k, q) in group.enumerated() where s.int64(k) != 0 { found[q.at] = true }
                }
                start += part.count
            }
        }
        return found
    }

    /// The same for one query, with its own statement.
    private func anyMatches(_ sql: QuerySQL, ids: [Int64], on c: Connection) throws -> Bool {
        let t = sql.soup.table
        let join = sql.whereClause.isEmpty ? " WHERE " : " AND "
        var start = 0
        while start < ids.count {
            let part = ids[start..<min(start + EntryIdList.chunk, ids.count)]
            // Cached: every live query of one shape shares the statement.
            let s = try c.cached("SELECT 1 FROM \(sql.from)\(sql.whereClause)\(join)\(t).id IN (\(EntryIdList.placeholders(part.count))) LIMIT 1")
            defer { s.reset() }
            sql.bind(s)
            for (n, id) in part.enumerated() { s.bind(sql.params.count + 1 + n, id) }
            if try s.step() { return true }
            start += part.count
        }
        return false
    }

    /// SQLite's data_version on the writer, when no write is under way.
    func dataVersionIfIdle() -> Int64? {
        guard lock.tryLock() else { return nil }
        defer { lock.unlock() }
        return try? writerIfOpen?.scalarInt("PRAGMA data_version")
    }
}
