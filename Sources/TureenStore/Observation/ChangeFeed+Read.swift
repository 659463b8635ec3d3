import TureenCore

/// Reading the change feed: `tureen_changes`' answer, and other processes'
/// changes for listeners.
extension ChangeFeed {
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
