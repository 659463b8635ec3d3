/// The SQL of an index query (all, exact, range, like) over one soup. Only
/// generated column names reach the SQL text; every key is a bound parameter.
struct QuerySQL {
    let soup: Soup
    let whereClause: String
    let orderClause: String
    let params: [SQLValue]

    init(_ q: QuerySpec, _ soup: Soup) throws {
        self.soup = soup
        var conditions: [String] = []
        var params: [SQLValue] = []
        if q.kind == .match {
            guard let fts = soup.ftsTable else {
                throw TureenError(.query, "soup '\(soup.name)' has no full_text index to match against")
            }
            var only: SoupIndex?
            if let path = q.indexPath {
                guard let i = soup.indexes.first(where: { $0.spec.path == path && $0.spec.type == .fullText }) else {
                    throw TureenError(.query, "'\(path)' is not a full_text index path of soup '\(soup.name)'")
                }
                only = i
            }
            // Matching one FTS column restricts every term to it.
            conditions.append("id IN (SELECT docid FROM \(fts) WHERE \(only?.column ?? fts) MATCH ?)")
            params.append(.text(try FullTextQuery.translate(q.matchKey?.stringValue ?? "", soup: soup, column: only)))
        } else if q.kind != .all {
            let path = q.indexPath ?? ""
            guard let index = soup.index(path: path) else {
                throw TureenError(.query, "soup '\(soup.name)' has no index on path '\(path)'")
            }
            let type = index.spec.type == .fullText ? IndexType.string : index.spec.type
            func key(_ v: JSON) -> SQLValue { IndexValue.of(v, segments: [], type: type) }
            switch q.kind {
            case .exact:
                conditions.append("\(index.sql) = ?")
                params.append(key(q.matchKey ?? .null))
            case .range:
                if let b = q.beginKey, b != .null { conditions.append("\(index.sql) >= ?"); params.append(key(b)) }
                if let e = q.endKey, e != .null { conditions.append("\(index.sql) <= ?"); params.append(key(e)) }
                conditions.append("\(index.sql) IS NOT NULL")
            case .like:
                conditions.append("\(index.sql) LIKE ?")
                params.append(.text(q.likeKey ?? ""))
            default:
                break
            }
        }
        whereClause = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        self.params = params
        if let op = q.orderPath {
            let column: String
            switch op {
            case EntryText.idKey: column = "id"
            case EntryText.modifiedKey: column = "lastModified"
            case "_soupCreatedDate": column = "created"
            default:
                guard let i = soup.index(path: op) else {
                    throw TureenError(.query, "soup '\(soup.name)' has no index on orderPath '\(op)'")
                }
                column = i.sql
            }
            let dir = q.order == .ascending ? "ASC" : "DESC"
            // id breaks ties so that pages never overlap or skip entries.
            orderClause = column == "id" ? " ORDER BY id \(dir)" : " ORDER BY \(column) \(dir), id \(dir)"
        } else {
            orderClause = ""
        }
    }

    func bind(_ s: Statement, from first: Int = 1) {
        for (i, p) in params.enumerated() { p.bind(s, first + i) }
    }
}
