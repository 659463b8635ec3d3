import TureenCore

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
    /// hold; created and updated entries have the record id `recordIds`
    /// gives (soup id → entry id → record id, .null for none) or are read
    /// for it.
    func write(_ c: Connection, _ deltas: [Int64: SoupDelta], recordIds: [Int64: [Int64: JSON]], origin: ChangeOrigin,
               names: (Int64) -> String?) throws {
        for (soupId, d) in deltas.sorted(by: { $0.key < $1.key }) {
            guard let name = d.droppedName ?? names(soupId) else { continue }
            var rows: [(Int64, Kind)] = []
            rows.reserveCapacity(d.created.count + d.updated.count + d.deleted.count)
            for id in d.created { rows.append((id, .create)) }
            for id in d.updated { rows.append((id, .update)) }
            for id in d.deleted { rows.append((id, .delete)) }
            rows.sort { $0.0 < $1.0 }
            try insert(c, soupId: soupId, soup: name, rows, known: recordIds[soupId] ?? [:], origin: origin, deleting: false)
        }
    }

    /// Delete rows for the entries of `soup` about to go: those with `ids`
    /// that are there, or every one (nil: a clear or a drop), read for their
    /// record ids while they still can be.
    func writeDeletes(_ c: Connection, soup: Soup, ids: [Int64]?, origin: ChangeOrigin) throws {
        if let ids = ids {
            return try insert(c, soupId: soup.id, soup: soup.name, Set(ids).sorted().map { ($0, .delete) }, known: [:], origin: origin,
                              deleting: true)
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

    /// One row per entry of `rows`, each with its record id from `known` or
    /// read for it (a delete not `deleting` has no entry left to read).
    /// `deleting`: an entry not there gets no row.
    ///
    /// Those not known are read one by one: an INSERT ... SELECT may insert
    /// several rows, so SQLite journals the pages it changes for the
    /// statement, and SQLCipher encrypts that journal; per entry that made a
    /// bulk upsert four times slower. The rows are then inserted many to a
    /// statement (`Chunk`).
    private func insert(_ c: Connection, soupId: Int64, soup name: String, _ rows: [(Int64, Kind)], known: [Int64: JSON],
                        origin: ChangeOrigin, deleting: Bool) throws {
        let read = try c.cached("SELECT soup FROM \(Soup.tableName(id: soupId)) WHERE id = ?")
        defer { read.reset() }
        var chunk = Chunk(soup: name, origin: ChangeFeed.originCode(origin), at: Clock.nowMs(), writer: WriterToken.current())
        for (id, kind) in rows {
            var recordId: JSON?
            if kind != .delete, let k = known[id] {
                recordId = k == .null ? nil : k
            } else if kind != .delete || deleting {
                read.bind(1, id)
                let found = try read.step()
                if found { recordId = RecordIdFunction.recordId(in: read.textBytes(0)) }
                read.reset()
                if deleting && !found { continue }
            }
            try chunk.add(c, (id, kind, recordId))
        }
        try chunk.flush(c)
        writtenSincePrune += chunk.written
    }

    typealias Row = (id: Int64, kind: Kind, recordId: JSON?)

    /// Feed rows of one soup and one write, inserted many to a statement:
    /// each INSERT reads and writes the table's sqlite_sequence row
    /// (AUTOINCREMENT) and sets its program up once, whatever its number of
    /// rows. Rows go in the order added, so their sequence numbers follow
    /// it as they did one statement a row. Statements of `most` rows, then
    /// of halves down to one row: at most seven are prepared.
    ///
    /// OR FAIL: a statement of several rows that may abort on a constraint
    /// is journalled (see `insert`), which cost more than the rows saved.
    /// No constraint can fail here (every NOT NULL column is bound a value),
    /// and any other error fails the whole write as one row's did.
    private struct Chunk {
        static let most = 64
        let soup: String, origin: Int64, at: Int64, writer: Int64
        private var rows: [Row] = []
        private(set) var written = 0

        init(soup: String, origin: Int64, at: Int64, writer: Int64) {
            (self.soup, self.origin, self.at, self.writer) = (soup, origin, at, writer)
            rows.reserveCapacity(Chunk.most)
        }

        mutating func add(_ c: Connection, _ row: Row) throws {
            rows.append(row)
            if rows.count == Chunk.most { try flush(c) }
        }

        mutating func flush(_ c: Connection) throws {
            var from = 0
            while from < rows.count {
                var n = Chunk.most
                while n > rows.count - from { n /= 2 }
                let s = try c.cached(Chunk.sql[Chunk.most.trailingZeroBitCount - n.trailingZeroBitCount])
                defer { s.reset() }
                // ?1 to ?4 hold what every row shares; each row has three more.
                s.bind(1, soup)
                s.bind(2, origin)
                s.bind(3, at)
                s.bind(4, writer)
                for k in 0..<n {
                    let row = rows[from + k]
                    s.bind(5 + 3 * k, row.id)
                    switch row.recordId {
                    case .int(let i)?: s.bind(6 + 3 * k, i)
                    case .string(let t)?: s.bind(6 + 3 * k, t)
                    default: break  // NULL, as reset leaves every parameter
                    }
                    s.bind(7 + 3 * k, row.kind.rawValue)
                }
                try s.step()
                from += n
            }
            written += rows.count
            rows.removeAll(keepingCapacity: true)
        }

        /// The INSERT of `most` rows, then of half as many, down to one row.
        private static let sql: [String] = {
            var all: [String] = []
            var n = most
            while n >= 1 {
                let values = (0..<n).map { k in "(?1, ?\(5 + 3 * k), ?\(6 + 3 * k), ?\(7 + 3 * k), ?2, ?3, ?4)" }
                all.append("INSERT OR FAIL INTO \(ChangeFeed.table) (soup, entry_id, record_id, kind, origin, at, writer) VALUES "
                    + values.joined(separator: ", "))
                n /= 2
            }
            return all
        }()
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
