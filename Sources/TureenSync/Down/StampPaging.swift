import TureenStore
import TureenCore

/// Kinto's feed paged by stamp: each page asks for records from the last
/// page's highest stamp on (`min_last_modified`, inclusive), sorted by stamp
/// alone, and drops those of that stamp it already has; the server's
/// Next-Page header only says whether more come.
///
/// Why not Kinto's own links: they page from the last record *after* it, so
/// records sharing its stamp (Kinto accepts a stamp a client gives) would be
/// skipped unless the id breaks ties, and sorting by stamp and id makes
/// every page an OR of two ranges. Kinto served such pages 2-2.5x slower
/// with its memory backend and 1.25x with PostgreSQL (bench/sync_bench.c,
/// Kinto's own request times), and the server's time is all of sync down's.
/// A run of one stamp that fills a page cannot be paged by stamp alone:
/// from there the feed follows Kinto's links sorted by stamp and id
/// (`tieSort`), the old way, to its end.
struct StampCursor {
    /// The stamp the next page starts at.
    var from: Int64
    /// Ids already received at `from`.
    var seen: Set<ExactString>
    /// Paging by the server's links (stamp and id) from `from` on.
    var ties: Bool
    /// The server's next link, once paging by ties.
    var link: String?

    var json: JSON {
        var members: [(String, JSON)] = [("from", .int(from)), ("seen", .array(seen.map { .string($0.text) })), ("ties", .bool(ties))]
        if let l = link { members.append(("link", .string(l))) }
        return .object(JSONObject(members))
    }

    init(from: Int64, seen: Set<ExactString>, ties: Bool, link: String? = nil) {
        self.from = from
        self.seen = seen
        self.ties = ties
        self.link = link
    }

    /// Only what `json` wrote: the cursor never leaves the sync run.
    init?(_ json: JSON?) {
        guard let o = json?.objectValue, let f = o["from"]?.int64Value, let s = o["seen"]?.arrayValue else { return nil }
        from = f
        seen = Set(s.compactMap { $0.stringValue.map(ExactString.init) })
        ties = o["ties"] == .bool(true)
        link = o["link"]?.stringValue
    }
}

extension RestTarget {
    /// One page of a feed paged by stamp (see StampCursor).
    func fetchByStamp(since: Stamp?, cursor: StampCursor?, filter: String, header: String,
                      tieSort: (String, String), limit: (String, Int)) throws -> FetchPage {
        let url: String
        if let link = cursor?.link {
            url = try followable(link)
        } else if let c = cursor {
            // The records asked for again come on top of the page's own
            // (both at most a page: no overflow).
            url = listURL(since: since, cursor: nil, overriding: (c.ties ? [tieSort] : [])
                + [(limit.0, String(limit.1 + c.seen.count)), (filter, String(c.from))])
        } else {
            url = listURL(since: since, cursor: nil)
        }
        let response = try send(HTTPRequest(method: "GET", url: url))
        var page = try page(from: response, url: url)
        let received = page.records
        let link = response.header(header)
        if let c = cursor {
            // A stamp filter brings deletions, as `since` does; a run from
            // no position never asked for them.
            page.removeRecords { r in
                (since == nil && isTombstone(r))
                    || (r[modifiedField]?.int64Value == c.from && r[idField].flatMap(SoupTransaction.keyText).map { c.seen.contains(ExactString($0)) } == true)
            }
        }
        page.next = link.map { nextCursor(after: received, cursor: cursor, link: $0).json }
        return page
    }

    /// Where the page after `received` starts, when the server has more.
    private func nextCursor(after received: [JSONObject], cursor: StampCursor?, link: String) -> StampCursor {
        if let c = cursor, c.ties {
            return StampCursor(from: c.from, seen: c.seen, ties: true, link: link)
        }
        let stamps = received.map { $0[modifiedField]?.int64Value }
        let from = cursor?.from ?? Int64.min
        // By stamp alone only while it moves forward past `from`: a page of
        // one stamp (or none readable, or going back) is paged by ties.
        guard let first = stamps.first ?? nil, let last = stamps.last ?? nil, first != last, last > from,
              !stamps.contains(where: { $0.map { $0 < from } ?? true }) else {
            guard let at = (stamps.first ?? nil).map({ max($0, from) }) ?? cursor?.from else {
                // Nothing to page from: the server's own links, as they are.
                return StampCursor(from: from, seen: [], ties: true, link: link)
            }
            return StampCursor(from: at, seen: ids(in: received, at: at, adding: at == from ? cursor?.seen : nil), ties: true)
        }
        return StampCursor(from: last, seen: ids(in: received, at: last, adding: nil), ties: false)
    }

    private func ids(in records: [JSONObject], at stamp: Int64, adding earlier: Set<ExactString>?) -> Set<ExactString> {
        var out = earlier ?? []
        for r in records where r[modifiedField]?.int64Value == stamp {
            if let id = r[idField].flatMap(SoupTransaction.keyText) { out.insert(ExactString(id)) }
        }
        return out
    }
}
