import TureenCore

/// A query spec, SmartStore's JSON shape:
/// {"queryType", "soupName", "indexPath", "matchKey", "beginKey", "endKey",
///  "likeKey", "smartSql", "orderPath", "order", "pageSize", "selectPaths"}.
public struct QuerySpec: Sendable {
    public enum Kind: String, Sendable { case all, exact, range, like, match, smart }
    public enum Order: String, Sendable { case ascending, descending }

    public static let defaultPageSize = 10
    public static let maxPageSize = 1_000_000

    public var kind: Kind
    public var soupName: String?
    public var indexPath: String?
    public var matchKey: JSON?
    public var beginKey: JSON?
    public var endKey: JSON?
    public var likeKey: String?
    public var smartSql: String?
    /// nil: unordered (orderPath given as null). Defaults to indexPath.
    public var orderPath: String?
    public var order: Order = .ascending
    public var pageSize = QuerySpec.defaultPageSize
    /// Values for the `?` parameters of smartSql.
    public var args: [JSON] = []
    /// For entry queries: return these paths as rows instead of entries.
    public var selectPaths: [String]?

    public static func parse(_ text: String) throws -> QuerySpec {
        // One pass over the members, each name matched once: building the
        // object and looking each known name up in it showed beside a short
        // query. A repeated name keeps its last value, as the parser does.
        var m = Members()
        var unknown: String?
        let isObject: Bool
        do {
            isObject = try JSONParser.parseMembers(text) { name, v in
                switch QuerySpecMember(name) {
                case .queryType?: m.queryType = v
                case .soupName?: m.soupName = v
                case .indexPath?: m.indexPath = v
                case .matchKey?: m.matchKey = v
                case .beginKey?: m.beginKey = v
                case .endKey?: m.endKey = v
                case .likeKey?: m.likeKey = v
                case .smartSql?: m.smartSql = v
                case .orderPath?: m.orderPath = v
                case .order?: m.order = v
                case .pageSize?: m.pageSize = v
                case .selectPaths?: m.selectPaths = v
                case .args?: m.args = v
                case nil: if unknown == nil { unknown = String(decoding: name, as: UTF8.self) }
                }
            }
        } catch let e as TureenError {
            throw TureenError(.query, "query spec: \(e.message)")
        }
        guard isObject else { throw TureenError(.query, "a query spec must be a JSON object") }
        if let k = unknown { throw TureenError(.query, "query spec has an unknown member '\(k)'") }
        guard let t = m.queryType?.stringValue, let kind = Kind(rawValue: t) else {
            throw TureenError(.query, "query spec needs \"queryType\": one of all, exact, range, like, match, smart")
        }
        var q = QuerySpec(kind: kind)
        func string(_ v: JSON?, _ key: String) throws -> String? {
            guard let v = v, v != .null else { return nil }
            guard let s = v.stringValue else { throw TureenError(.query, "\"\(key)\" must be a string") }
            return s
        }
        q.soupName = try string(m.soupName, "soupName")
        q.indexPath = try string(m.indexPath, "indexPath")
        q.likeKey = try string(m.likeKey, "likeKey")
        q.smartSql = try string(m.smartSql, "smartSql")
        q.matchKey = m.matchKey
        q.beginKey = m.beginKey
        q.endKey = m.endKey
        if let op = m.orderPath {
            q.orderPath = op == .null ? nil : try string(op, "orderPath")
        } else {
            q.orderPath = q.indexPath
        }
        if let ord = try string(m.order, "order") {
            guard let v = Order(rawValue: ord) else { throw TureenError(.query, "\"order\" must be ascending or descending, not '\(ord)'") }
            q.order = v
        }
        if let ps = m.pageSize, ps != .null {
            guard let n = ps.int64Value, n >= 1, n <= Int64(maxPageSize) else {
                throw TureenError(.query, "\"pageSize\" must be an integer from 1 to \(maxPageSize)")
            }
            q.pageSize = Int(n)
        }
        if kind != .smart && q.soupName == nil { throw TureenError(.query, "a \(t) query needs \"soupName\"") }
        switch kind {
        case .exact:
            guard q.indexPath != nil else { throw TureenError(.query, "an exact query needs \"indexPath\"") }
            guard let k = q.matchKey, k != .null else { throw TureenError(.query, "an exact query needs a non-null \"matchKey\"") }
        case .range:
            guard q.indexPath != nil else { throw TureenError(.query, "a range query needs \"indexPath\"") }
        case .like:
            guard q.indexPath != nil else { throw TureenError(.query, "a like query needs \"indexPath\"") }
            guard q.likeKey != nil else { throw TureenError(.query, "a like query needs a string \"likeKey\"") }
        case .smart:
            guard q.smartSql != nil else { throw TureenError(.query, "a smart query needs \"smartSql\"") }
        case .match:
            guard q.matchKey?.stringValue != nil else { throw TureenError(.query, "a match query needs a string \"matchKey\"") }
        case .all:
            break
        }
        if let a = m.args, a != .null {
            guard kind == .smart, case .array(let items) = a else { throw TureenError(.query, "\"args\" must be an array, for a smart query") }
            for (n, v) in items.enumerated() where v.arrayValue != nil || v.objectValue != nil {
                throw TureenError(.query, "args[\(n)] is \(v.typeName); a parameter takes a string, number, boolean or null")
            }
            q.args = items
        }
        if let sp = m.selectPaths, sp != .null {
            guard kind != .smart else { throw TureenError(.query, "a smart query selects with its SQL, not \"selectPaths\"") }
            guard case .array(let items) = sp, !items.isEmpty else { throw TureenError(.query, "\"selectPaths\" must be a non-empty array of paths") }
            q.selectPaths = try items.map {
                guard let p = $0.stringValue else { throw TureenError(.query, "\"selectPaths\" holds a \($0.typeName), not a path") }
                return p
            }
        }
        return q
    }

    /// The members a spec may have, as given.
    private struct Members {
        var queryType, soupName, indexPath, matchKey, beginKey, endKey, likeKey, smartSql: JSON?
        var orderPath, order, pageSize, selectPaths, args: JSON?
    }
}
