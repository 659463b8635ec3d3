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

    /// Calls `callback` with each sync event whose code is in `codes` (every
    /// code when nil), on the notification thread, in the order published.
    public func listenSync(codes: Set<String>?, _ callback: @escaping (String) -> Void, release: (() -> Void)?) throws -> Int {
        try notifier.add(.sync(codes), callback, release: release)
    }

    /// Whether a sync listener of this handle wants events with `code`.
    public func wantsSyncEvent(_ code: String) -> Bool {
        notifierLock.withLock { notifierIfMade }?.wantsSync(code) ?? false
    }

    /// Queues a sync event for this handle's sync listeners; they hear it on
    /// the notification thread, after the commits published before it.
    public func publishSyncEvent(code: String, text: String) {
        notifierLock.withLock { notifierIfMade }?.enqueue(.sync(code: code, text: text))
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

    /// Whether any of the entries `ids` of an entry query's soup matches it
    /// now (its conditions, not its page): a live query whose page held none
    /// of them need not re-run when none matches.
    func anyMatches(_ q: QuerySpec, ids: [Int64], on c: Connection) throws -> Bool {
        guard !ids.isEmpty else { return false }
        do {
            let soup = try catalog.soup(q.soupName ?? "", c)
            let sql = try QuerySQL(q, soup)
            let join = sql.whereClause.isEmpty ? " WHERE " : " AND "
            var start = 0
            while start < ids.count {
                let part = ids[start..<min(start + 500, ids.count)]
                // Cached: every live query of one shape shares the statement.
                let s = try c.cached("SELECT 1 FROM \(sql.from)\(sql.whereClause)\(join)\(soup.table).id IN (\(EntryIdList.placeholders(part.count))) LIMIT 1")
                defer { s.reset() }
                sql.bind(s)
                for (n, id) in part.enumerated() { s.bind(sql.params.count + 1 + n, id) }
                if try s.step() { return true }
                start += part.count
            }
            return false
        }
    }

    /// SQLite's data_version on the writer, when no write is under way.
    func dataVersionIfIdle() -> Int64? {
        guard lock.tryLock() else { return nil }
        defer { lock.unlock() }
        return try? writerIfOpen?.scalarInt("PRAGMA data_version")
    }
}
