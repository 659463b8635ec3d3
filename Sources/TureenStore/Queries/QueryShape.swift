import TureenCore

/// What the SQL of an index query's page depends on: the soup as the
/// catalog version describes it, and the spec without its keys. Pages of
/// queries that differ only in their keys share one prepared statement
/// (`Connection.pageStatements`), so the SQL is built once per shape;
/// building it and looking it up by its text were a third of a short
/// query's own time.
struct QueryShape: Hashable {
    let soupId: Int64
    let catalogVersion: Int64
    let kind: QuerySpec.Kind
    let indexPath: String?
    let orderPath: String?
    let order: QuerySpec.Order
    /// A range condition is written only for a bound that is given.
    let hasBegin: Bool
    let hasEnd: Bool

    /// Hashes the numbers only: hashing the two paths as well was a quarter
    /// of the lookup, and shapes that differ only in their paths are few per
    /// soup (equality still compares every field).
    func hash(into h: inout Hasher) {
        h.combine(soupId)
        h.combine(catalogVersion)
        h.combine(kind)
        h.combine(order)
        h.combine(hasBegin)
        h.combine(hasEnd)
    }

    /// Every field; the paths by their bytes, as the soup's index paths
    /// are matched (IndexSpec): by String ==, a query naming the NFD
    /// spelling of a path got the statement made for the NFC one.
    static func == (a: QueryShape, b: QueryShape) -> Bool {
        func same(_ x: String?, _ y: String?) -> Bool {
            guard let x, let y else { return x == nil && y == nil }
            return x.hasSameBytes(as: y)
        }
        return a.soupId == b.soupId && a.catalogVersion == b.catalogVersion && a.kind == b.kind && a.order == b.order
            && a.hasBegin == b.hasBegin && a.hasEnd == b.hasEnd && same(a.indexPath, b.indexPath) && same(a.orderPath, b.orderPath)
    }

    init(_ q: QuerySpec, soupId: Int64, catalogVersion: Int64) {
        self.soupId = soupId
        self.catalogVersion = catalogVersion
        kind = q.kind
        indexPath = q.indexPath
        orderPath = q.orderPath
        order = q.order
        hasBegin = q.beginKey.map { $0 != .null } ?? false
        hasEnd = q.endKey.map { $0 != .null } ?? false
    }
}
