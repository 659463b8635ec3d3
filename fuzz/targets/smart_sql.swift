@testable import TureenCore
@testable import TureenStore

// Smart SQL: translated against the sample soups' catalog, then run as a
// smart query (a page and a count) under a short query timeout. Text
// without a {reference} must come out of the translation as it went in.

private let store: Store = {
    let s = ScratchStore.open(queryTimeoutMs: 100)
    SampleSoups.fill(s)
    return s
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard let sql = abiString(data, size) else { return 0 }
    do {
        let translated = try store.withConnection { c in
            try SmartSQL(sql, catalog: { try store.catalog.find($0, c) }).sql
        }
        if !sql.unicodeScalars.contains("{") { require(translated == sql, "text without references changed") }
    } catch { refused(error) }
    var q = QuerySpec(kind: .smart)
    q.smartSql = sql
    q.pageSize = 5
    do {
        let page = try store.query(q, pageIndex: 0)
        let json = try? JSONParser.parse(bytes: page.buffer)
        require(json?.arrayValue != nil, "a Smart SQL page is not a JSON array")
    } catch { refused(error) }
    do { _ = try store.count(q) } catch { refused(error) }
    return 0
}
