@testable import TureenCore
@testable import TureenStore

// SmartStore's full-text match syntax: translated for the sample soup's
// full_text indexes, with and without an indexPath. The translation promises
// that whatever the key, it is a QUERY error or an FTS expression SQLite
// accepts: so a key that translates must also run as a match query.

private let store: Store = {
    let s = ScratchStore.open()
    SampleSoups.fill(s)
    return s
}()

private let soup: Soup = {
    do { return try store.withConnection { try store.catalog.soup("employees", $0) } } catch { fatalError("\(error)") }
}()

/// Five negations were the fewest that reached FTS4's depth limit when
/// mixed with ORs and terms (sqlcipher's shell, random keys).
private func manyNegations(_ expression: String) -> Bool {
    expression.split(separator: " ").filter { $0.hasPrefix("-") }.count >= 5
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard let key = abiString(data, size) else { return 0 }
    let column = soup.indexes.first { $0.spec.path == "bio" }
    for only in [nil, column] {
        let translated: String
        do { translated = try FullTextQuery.translate(key, soup: soup, column: only) } catch { refused(error); continue }
        var q = QuerySpec(kind: .match)
        q.soupName = "employees"
        q.indexPath = only?.spec.path
        q.matchKey = .string(key)
        do {
            _ = try store.query(q, pageIndex: 0)
            _ = try store.count(q)
        } catch let e as TureenError where e.code == .query && (!e.message.contains("malformed MATCH") || manyNegations(translated)) {
            // FTS4 limits an expression's depth to 12, and negations deepen
            // it with the terms around them; past that SQLite answers "too
            // large" or "malformed" (a QUERY error for the host). Short of
            // that, a malformed expression is a translation bug.
        } catch {
            fatalError("match key \(key) translated to \(translated) but the query failed: \(error)")
        }
    }
    return 0
}
