import Glibc

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

    // MARK: reading

    /// The highest sequence number ever given (0: none yet), pruned or not.
    static func newestSeq(_ c: Connection) throws -> Int64 {
        let s = try c.cached(literal: "SELECT seq FROM sqlite_sequence WHERE name = 'tureen_changes'")
        defer { s.reset() }
        return try s.step() ? s.int64(0) : 0
    }

    /// The position up to which changes are gone: every row after it is kept.
    static func prunedThrough(_ c: Connection, newest: Int64) throws -> Int64 {
        let s = try c.cached(literal: "SELECT min(seq) FROM tureen_changes")
        defer { s.reset() }
        guard try s.step(), s.columnType(0) != 5 /* SQLITE_NULL */ else { return newest }
        return s.int64(0) - 1
    }

    /// `tureen_changes`' answer; the caller holds one snapshot on `c`.
    static func read(_ c: Connection, _ r: ChangesRequest) throws -> JSONWriter {
        let newest = try newestSeq(c)
        let since = r.since ?? newest
        if since > newest {
            throw TureenError.invalid("\"since\": \(since) is past the newest change of this store (\(newest)): it is no position this store gave")
        }
        let gone = try prunedThrough(c, newest: newest)
        if since < gone {
            throw TureenError(.notFound, "the changes after \(since) are no longer kept: the feed holds those after \(gone) "
                + "(changes_keep_ms and changes_keep_count); read the soups again, then follow the feed from \"lastSeq\" of {\"since\": \"now\"}")
        }
        let s = try c.cached("SELECT seq, soup, entry_id, record_id, kind, origin FROM \(table) WHERE seq > ?1"
            + (r.soup == nil ? "" : " AND soup = ?3") + " ORDER BY seq LIMIT ?2")
        defer { s.reset() }
        s.bind(1, since)
        s.bind(2, r.limit)
        if let soup = r.soup { s.bind(3, soup) }
        let out = JSONWriter(reserving: 256)
        out.appendRaw("{\"changes\":[")
        var count: Int64 = 0
        var last = since
        while try s.step() {
            if count > 0 { out.appendRaw(",") }
            count += 1
            last = s.int64(0)
            out.appendRaw("{\"seq\":")
            out.writeInt(last)
            out.appendRaw(",\"soup\":")
            out.writeString(utf8: s.textBytes(1))
            out.appendRaw(",\"entryId\":")
            out.writeInt(s.int64(2))
            out.appendRaw(",\"recordId\":")
            switch s.columnType(3) {
            case 1: out.writeInt(s.int64(3))  // SQLITE_INTEGER
            case 3: out.writeString(utf8: s.textBytes(3))  // SQLITE_TEXT
            default: out.appendRaw("null")
            }
            out.appendRaw(",\"kind\":\"")
            out.appendRaw((Kind(rawValue: s.int64(4)) ?? .update).name)
            out.appendRaw(s.int64(5) == 1 ? "\",\"origin\":\"sync\"}" : "\",\"origin\":\"app\"}")
        }
        // A full page may have more after it; a short one saw every row, so
        // a caller filtering by soup moves past the other soups' changes too.
        out.appendRaw("],\"lastSeq\":")
        out.writeInt(count < r.limit ? newest : last)
        out.appendRaw("}")
        return out
    }

    /// Other processes' changes after `after`, one per soup, as listeners
    /// hear them (origin external), and the newest position; nil changes
    /// when some after `after` are no longer kept.
    static func othersChanges(_ c: Connection, after: Int64) throws -> (changes: [SoupChange]?, newest: Int64) {
        let newest = try newestSeq(c)
        guard after >= (try prunedThrough(c, newest: newest)) else { return (nil, newest) }
        let s = try c.cached(literal: "SELECT soup, entry_id, kind FROM tureen_changes WHERE seq > ? AND writer != ? ORDER BY seq")
        defer { s.reset() }
        s.bind(1, after)
        s.bind(2, WriterToken.current())
        var order: [String] = []
        var deltas: [String: SoupDelta] = [:]
        while try s.step() {
            guard let soup = s.text(0) else { continue }
            if deltas[soup] == nil { order.append(soup) }
            let id = s.int64(1)
            switch Kind(rawValue: s.int64(2)) {
            case .create?: deltas[soup, default: SoupDelta()].inserted(id)
            case .delete?: deltas[soup, default: SoupDelta()].removed(id)
            default: deltas[soup, default: SoupDelta()].changed(id)
            }
        }
        let changes = order.compactMap { soup -> SoupChange? in
            guard let d = deltas[soup], !(d.created.isEmpty && d.updated.isEmpty && d.deleted.isEmpty) else { return nil }
            return d.change(soup: soup, origin: .external)
        }
        return (changes, newest)
    }
}

/// Which process wrote a feed row: listeners hear other processes' rows as
/// external changes, their own process's already came as its commits. A
/// random number per process, drawn again in a child after fork().
enum WriterToken {
    private static let drawn = Locked<(pid: pid_t, token: Int64)?>(nil)

    static func current() -> Int64 {
        let pid = getpid()
        return drawn.withLock { d in
            if let d = d, d.pid == pid { return d.token }
            let t = Int64.random(in: Int64.min...Int64.max)
            d = (pid, t)
            return t
        }
    }
}

/// `tureen_changes` options: {"since": seq or "now", "soup": name, "limit": n}.
public struct ChangesRequest: Sendable {
    /// nil: "now", the newest position.
    public var since: Int64? = 0
    public var soup: String?
    public var limit: Int64 = ChangesRequest.defaultLimit

    public static let defaultLimit: Int64 = 1000
    public static let maxLimit: Int64 = 100_000

    public init() {}

    public static func parse(_ text: String?) throws -> ChangesRequest {
        var r = ChangesRequest()
        guard let text = text else { return r }
        guard case .object(let o) = try JSONParser.parse(text) else {
            throw TureenError.invalid("the changes options must be a JSON object")
        }
        for k in o.keys where !["since", "soup", "limit"].contains(k) {
            throw TureenError.invalid("unknown changes option '\(k)'; known: limit, since, soup")
        }
        if let v = o["since"], v != .null {
            if v.stringValue == "now" {
                r.since = nil
            } else {
                guard case .int(let n) = v, n >= 0 else {
                    throw TureenError.invalid("\"since\" must be a non-negative integer (a \"seq\" or \"lastSeq\" of this store) or \"now\"")
                }
                r.since = n
            }
        }
        if let v = o["soup"], v != .null {
            guard let s = v.stringValue else { throw TureenError.invalid("\"soup\" must be a soup name") }
            try SoupCatalog.validateName(s)
            r.soup = s
        }
        if let v = o["limit"], v != .null {
            guard case .int(let n) = v, n >= 1, n <= maxLimit else {
                throw TureenError.invalid("\"limit\" must be an integer from 1 to \(maxLimit)")
            }
            r.limit = n
        }
        return r
    }
}
