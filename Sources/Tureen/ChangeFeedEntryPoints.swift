import TureenStore
import TureenCore

@_cdecl("tureen_changes")
public func tureen_changes(_ store: OpaquePointer?, _ options: UnsafePointer<CChar>?, _ json: OutString?) -> Int32 {
    boundary {
        let out = try outPointer(json, "json")
        out.pointee = nil
        let s = try Handles.store(store)
        let request = try ChangesRequest.parse(try inputString(optional: options, "options_json"))
        try deliver(try s.changes(request), to: out)
    }
}
