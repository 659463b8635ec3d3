@testable import TureenCore
@testable import TureenStore

// Index specs as tureen_soup_register and tureen_soup_alter take them. An
// accepted list must also work: a soup registers with it, takes entries
// (whose values are read along the fuzzed paths), answers a query on each
// path, alters away from it and back, and drops.

private let store = ScratchStore.open()

private let entries = """
    [{"a":"x","b":{"c":[1,2.5,"t"]},"n":1e300,"big":123456789012345678901234567890},
     {"a":[{"b":"y"},{"b":null}],"c.d":true,"e":{"":"empty name"}}]
    """

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard let text = abiString(data, size) else { return 0 }
    let specs: [IndexSpec]
    do { specs = try IndexSpec.parseList(text) } catch { refused(error); return 0 }
    require(!specs.isEmpty, "an empty spec list was accepted")
    for s in specs { require((try? IndexSpec.validatePath(s.path, what: "spec")) != nil, "an accepted path fails validation") }
    // What was accepted round-trips through its JSON form.
    let again = try? IndexSpec.parseList(JSONWriter.string(.array(specs.map { $0.json })))
    require(again == specs, "index specs do not survive their own JSON form")
    do {
        try store.registerSoup("s", specs: specs)
        defer { try? store.dropSoup("s") }
        _ = try store.upsert(soup: "s", entries: entries, externalIdPath: nil)
        for spec in specs {
            let kind = spec.type == .fullText ? "match" : "range"
            let key = spec.type == .fullText ? ",\"matchKey\":\"x\"" : ""
            let q = try QuerySpec.parse("{\"queryType\":\"\(kind)\",\"soupName\":\"s\",\"indexPath\":\(JSONWriter.string(.string(spec.path)))\(key)}")
            _ = try store.query(q, pageIndex: 0)
        }
        // A soup of its own each time: an alter never frees the columns of
        // the specs it drops (see Store+Alter.swift), so one soup altered
        // without end would reach SQLite's 2000 columns.
        try store.alterSoup("s", specs: [IndexSpec(path: "a", type: .string)], reindex: false)
        try store.alterSoup("s", specs: specs, reindex: true)
        let extra = IndexSpec(path: "zz", type: .integer)
        try store.alterSoup("s", specs: specs.contains(extra) ? specs : specs + [extra], reindex: false)
    } catch {
        fatalError("accepted specs \(text) failed in use: \(error)")
    }
    return 0
}
