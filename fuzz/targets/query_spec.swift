@testable import TureenCore
@testable import TureenStore

// Query specs as tureen_query, tureen_query_count and the listeners take
// them: parsed, then run (a page and a count) against sample soups, as the
// C ABI would. Whatever the spec, the answer is a result or an error, and a
// page is JSON.

private let store: Store = {
    let s = ScratchStore.open()
    SampleSoups.fill(s)
    return s
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard let text = abiString(data, size) else { return 0 }
    var q: QuerySpec
    do { q = try QuerySpec.parse(text) } catch { refused(error); return 0 }
    require(q.pageSize >= 1 && q.pageSize <= QuerySpec.maxPageSize, "pageSize out of range")
    // A page from the sample soups holds at most 3 rows: keep large pages cheap.
    q.pageSize = min(q.pageSize, 50)
    do {
        let page = try store.query(q, pageIndex: Int(data[0] & 3))
        let json = try? JSONParser.parse(bytes: page.buffer)
        require(json?.arrayValue != nil, "a query page is not a JSON array")
    } catch { refused(error) }
    do { _ = try store.count(q) } catch { refused(error) }
    return 0
}
