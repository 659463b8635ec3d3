/// The durable change feed, table `tureen_changes`: one row per entry a
/// commit created, updated or deleted, written in that commit, numbered by
/// an AUTOINCREMENT sequence (never reused, so a position read once always
/// means the same change). Rows go when older than the retention allows;
/// the rows kept are always one unbroken run of sequence numbers, so the
/// oldest kept row says what is gone.
///
/// One per store handle, used by the thread that holds its write lock.
final class ChangeFeed {
    static let table = "tureen_changes"

    /// Row kinds as stored, and as `tureen_changes` names them.
    enum Kind: Int64 {
        case create = 1, update = 2, delete = 3
        var name: StaticString {
            switch self {
            case .create: return "create"
            case .update: return "update"
            case .delete: return "delete"
            }
        }
    }

    /// Open options changes_keep_ms and changes_keep_count (0: no limit).
    let keepMs: Int64
    let keepCount: Int64
    private var writtenSincePrune = 0
    private var lastPruneMs: Int64 = 0

    init(keepMs: Int64, keepCount: Int64) {
        self.keepMs = keepMs
        self.keepCount = keepCount
    }

    static func createTable(_ c: Connection) throws {
        // No index beyond the sequence: reads and pruning walk it in order.
        try c.execute("""
            CREATE TABLE IF NOT EXISTS \(table) (seq INTEGER PRIMARY KEY AUTOINCREMENT, soup TEXT NOT NULL,
                entry_id INTEGER NOT NULL, record_id, kind INTEGER NOT NULL, origin INTEGER NOT NULL,
                at INTEGER NOT NULL, writer INTEGER NOT NULL)
            """)
    }

    /// A store written before the feed existed gains it at its first open here.
    static func createIfMissing(_ c: Connection) throws {
        let has = try c.scalarInt("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = '\(table)'") ?? 0
        if has == 0 { try c.transaction { try createTable(c) } }
    }

    // MARK: writing

    private static func originCode(_ o: ChangeOrigin) -> Int64 { o == .sync ? 1 : 0 }

    /// Rows for what `deltas` (soup id → its changes since the last write)
    /// hold; created and updated entries are read for their record id.
    func write(_ c: Connection, _ deltas: [Int64: SoupDelta], origin: ChangeOrigin, names: (Int64) -> String?) throws {
        for (soupId, d) in deltas.sorted(by: { $0.key < $1.key }) {
            guard let name = d.droppedName ?? names(soupId) else { continue }
            var rows: [(Int64, Kind)] = []
            rows.reserveCapacity(d.created.count + d.updated.count + d.deleted.count)
            for id in d.created { rows.append((id, .create)) }
            for id in d.updated { rows.append((id, .update)) }
            for id in d.deleted { rows.append((id, .delete)) }
            rows.sort { $0.0 < $1.0 }
            try insert(c, soupId: soupId, soup: name, rows, origin: origin, deleting: false)
        }
    }

    /// Delete rows for the entries of `soup` about to go: those with `ids`
    /// that are there, or every one (nil: a clear or a drop), read for their
    /// record ids while they still can be.
    func writeDeletes(_ c: Connection, soup: Soup, ids: [Int64]?, origin: ChangeOrigin) throws {
        if let ids = ids {
            return try insert(c, soupId: soup.id, soup: soup.name, Set(ids).sorted().map { ($0, .delete) }, origin: origin, deleting: true)
        }
        // One statement for the whole soup: the journal SQLite keeps for a
        // statement of many rows (see `insert`) is paid once.
        let s = try c.prepare("""
            INSERT INTO \(ChangeFeed.table) (soup, entry_id, record_id, kind, origin, at, writer)
            SELECT ?, id, \(RecordIdFunction.name)(soup), \(Kind.delete.rawValue), ?, ?, ? FROM \(soup.table) ORDER BY id
            """)
        s.bind(1, soup.name)
        s.bind(2, ChangeFeed.originCode(origin))
        s.bind(3, Clock.nowMs())
        s.bind(4, WriterToken.current())
        try s.step()
        writtenSincePrune += c.changes
    }

    /// One row per entry of `rows`, each read for its record id (a delete
    /// not `deleting` has no entry left to read). `deleting`: an entry not
    /// there gets no row.
    ///
    /// Read, then inserted alone: an INSERT ... SELECT may insert several
    /// rows, so SQLite journals the pages it changes for the statement, and
    /// SQLCipher encrypts that journal; per entry that made a bulk upsert
    /// four times slower.
    private func insert(_ c: Connection, soupId: Int64, soup name: String, _ rows: [(Int64, Kind)], origin: ChangeOrigin,
                        deleting: Bool) throws {
        let at = Clock.nowMs()
        let writer = WriterToken.current()
        let read = try c.cached("SELECT soup FROM \(Soup.tableName(id: soupId)) WHERE id = ?")
        defer { read.reset() }
        let insert = try c.cached(literal: """
            INSERT INTO tureen_changes (soup, entry_id, record_id, kind, origin, at, writer) VALUES (?, ?, ?, ?, ?, ?, ?)
            """)
        defer { insert.reset() }
        for (id, kind) in rows {
            insert.bindNull(3)
            if kind != .delete || deleting {
                read.bind(1, id)
                let found = try read.step()
                if found { ChangeFeed.bindRecordId(insert, 3, stored: read.textBytes(0)) }
                read.reset()
                if deleting && !found { continue }
            }
            insert.bind(1, name)
            insert.bind(2, id)
            insert.bind(4, kind.rawValue)
            insert.bind(5, ChangeFeed.originCode(origin))
            insert.bind(6, at)
            insert.bind(7, writer)
            try insert.step()
            insert.reset()
            writtenSincePrune += 1
        }
    }

    /// Binds an entry's record id (see RecordIdFunction), leaving NULL bound
    /// when it has none.
    static func bindRecordId(_ s: Statement, _ i: Int, stored: UnsafeBufferPointer<UInt8>) {
        switch RecordIdFunction.recordId(in: stored) {
        case .int(let n)?: s.bind(i, n)
        case .string(let t)?: s.bind(i, t)
        default: break
        }
    }

    /// Drops what the retention no longer keeps, now and then: after a
    /// sixteenth of the count limit (at least 256 rows) written since the
    /// last look, or a minute.
    func pruneIfDue(_ c: Connection) throws {
        guard keepMs > 0 || keepCount > 0, writtenSincePrune > 0 else { return }
        let now = Clock.nowMs()
        let every = keepCount > 0 ? max(256, Int(min(keepCount / 16, Int64(Int.max)))) : 4096
        guard writtenSincePrune >= every || now - lastPruneMs >= 60_000 else { return }
        writtenSincePrune = 0
        lastPruneMs = now
        let newest = try ChangeFeed.newestSeq(c)
        var through: Int64 = 0
        if keepCount > 0 { through = newest - keepCount }
        if keepMs > 0 {
            // Sequence order is commit order, so the old rows come first:
            // the walk stops at the first one young enough to keep.
            let s = try c.cached(literal: "SELECT seq FROM tureen_changes WHERE at >= ? ORDER BY seq LIMIT 1")
            defer { s.reset() }
            s.bind(1, now - keepMs)
            through = max(through, try s.step() ? s.int64(0) - 1 : newest)
        }
        guard through > 0 else { return }
        let d = try c.cached(literal: "DELETE FROM tureen_changes WHERE seq <= ?")
        defer { d.reset() }
        d.bind(1, through)
        try d.step()
    }
}
