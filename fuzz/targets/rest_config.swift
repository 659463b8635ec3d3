@testable import TureenCore
@testable import TureenStore
@testable import TureenSync

// Sync targets of type "rest" and "kinto" as tureen_sync_create and the
// cache take them. An accepted config must then build every request it
// describes without trapping: list URLs with and without a position and a
// cursor, and each kind of change, with ids and versions a server could send.

private let cancel = CancelFlag()

private let ids = ["r1", "..", "a/b?c#d", "é", ""]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard let text = abiString(data, size) else { return 0 }
    let config: RestConfig
    do { config = try RestConfig.parse(try JSONParser.parse(text)) } catch { refused(error); return 0 }
    let target: RestTarget
    do { target = try RestTarget(config, cancel: cancel) } catch { fatalError("an accepted config made no target: \(error)") }
    for since in [nil, Stamp(ms: 0), Stamp(ms: Stamp.largest), Stamp(ms: 1, text: "2026-11-24T10:15:30Z")] {
        for next in [nil, JSON.string("c"), .int(-1)] {
            require(target.listURL(since: since, cursor: next).hasPrefix(config.url), "a list URL left the target")
        }
    }
    let record = JSONObject([("id", .string("r1")), ("last_modified", .int(5)), ("v", .string("x"))])
    for id in ids {
        for kind in [Change.Kind.create, .update, .delete] {
            for version in [nil, "17", "\"w\""] {
                let change = Change(kind: kind, id: id, record: record, partial: kind == .update && version == nil, ifMatch: version, base: record)
                let r = target.request(for: change)
                require(r.url.hasPrefix(config.url), "a change's URL left the target")
                _ = target.version(of: record)
            }
        }
        _ = target.recordURL(id)
    }
    return 0
}
