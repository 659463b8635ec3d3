import TureenCore

/// The SQL of an index query (all, exact, range, like, match) over one soup.
/// Only generated names reach the SQL text; every key is a bound parameter.
/// Columns are qualified by the soup's table, because a match query joins
/// the FTS table, whose columns share the soup's column names.
struct QuerySQL {
    let soup: Soup
    /// The soup's table, or for a match the FTS table driving a join, so that
    /// SQLite walks the matches and stops at the page instead of collecting
    /// every match first.
    let from: String
    /// For tureen_count: a match counts on the FTS table alone.
    let countFrom: String
    /// The conditions joined with AND ("" for none), and as a WHERE clause.
    let condition: String
    let whereClause: String
    let orderClause: String
    let params: [SQLValue]

    init(_ q: QuerySpec, _ soup: Soup) throws {
        self.soup = soup
        var conditions: [String] = []
        let t = soup.table
        var from = t
        var countFrom = t
        if q.kind == .match {
            let (fts, only) = try QuerySQL.matchTarget(q, soup)
            // Matching one FTS column restricts every term to it.
            conditions.append("\(fts).\(only?.column ?? fts) MATCH ?")
            from = "\(fts) CROSS JOIN \(t) ON \(t).id = \(fts).docid"
            countFrom = fts
        } else if q.kind != .all {
            let value = try QuerySQL.keyIndex(q, soup).sql(in: t)
            switch q.kind {
            case .exact:
                conditions.append("\(value) = ?")
            case .range:
                if let b = q.beginKey, b != .null { conditions.append("\(value) >= ?") }
                if let e = q.endKey, e != .null { conditions.append("\(value) <= ?") }
                conditions.append("\(value) IS NOT NULL")
            case .like:
                conditions.append("\(value) LIKE ?")
            default:
                break
            }
        }
        params = try QuerySQL.keys(q, soup)
        self.from = from
        self.countFrom = countFrom
        condition = conditions.joined(separator: " AND ")
        whereClause = condition.isEmpty ? "" : " WHERE " + condition
        if let op = q.orderPath {
            let column: String
            switch op {
            case EntryText.idKey: column = "\(t).id"
            case EntryText.modifiedKey: column = "\(t).lastModified"
            case "_soupCreatedDate": column = "\(t).created"
            default:
                guard let i = soup.index(path: op) else {
                    throw TureenError(.query, "soup '\(soup.name)' has no index on orderPath '\(op)'")
                }
                column = i.sql(in: t)
            }
            let dir = q.order == .ascending ? "ASC" : "DESC"
            // id breaks ties so that pages never overlap or skip entries.
            orderClause = column == "\(t).id" ? " ORDER BY \(t).id \(dir)" : " ORDER BY \(column) \(dir), \(t).id \(dir)"
        } else {
            orderClause = ""
        }
    }

    /// The FTS table a match query reads and the one full_text index it is
    /// restricted to (nil: every full_text column).
    private static func matchTarget(_ q: QuerySpec, _ soup: Soup) throws -> (String, SoupIndex?) {
        guard let fts = soup.ftsTable else {
            throw TureenError(.query, "soup '\(soup.name)' has no full_text index to match against")
        }
        guard let path = q.indexPath else { return (fts, nil) }
        guard let i = soup.indexes.first(where: { $0.spec.path.hasSameBytes(as: path) && $0.spec.type == .fullText }) else {
            throw TureenError(.query, "'\(path)' is not a full_text index path of soup '\(soup.name)'")
        }
        return (fts, i)
    }

    /// The index an exact, range or like query compares its keys with.
    private static func keyIndex(_ q: QuerySpec, _ soup: Soup) throws -> SoupIndex {
        let path = q.indexPath ?? ""
        guard let index = soup.index(path: path) else {
            throw TureenError(.query, "soup '\(soup.name)' has no index on path '\(path)'")
        }
        return index
    }

    /// The values bound to the `?` of the conditions, in their order: the
    /// only part of the SQL that differs between queries of one shape, so a
    /// page whose statement is already prepared needs only these.
    static func keys(_ q: QuerySpec, _ soup: Soup) throws -> [SQLValue] {
        switch q.kind {
        case .match:
            let (_, only) = try matchTarget(q, soup)
            return [.text(try FullTextQuery.translate(q.matchKey?.stringValue ?? "", soup: soup, column: only))]
        case .exact, .range, .like:
            let index = try keyIndex(q, soup)
            let type = index.spec.type == .fullText ? IndexType.string : index.spec.type
            func key(_ v: JSON) -> SQLValue { IndexValue.ofKey(v, type: type) }
            switch q.kind {
            case .exact:
                return [key(q.matchKey ?? .null)]
            case .range:
                return [q.beginKey, q.endKey].compactMap { $0 }.filter { $0 != .null }.map(key)
            default:
                return [.text(q.likeKey ?? "")]
            }
        case .all, .smart:
            return []
        }
    }

    func bind(_ s: Statement, from first: Int = 1) {
        QuerySQL.bind(params, s, from: first)
    }

    static func bind(_ params: [SQLValue], _ s: Statement, from first: Int = 1) {
        for (i, p) in params.enumerated() { p.bind(s, first + i) }
    }
}
