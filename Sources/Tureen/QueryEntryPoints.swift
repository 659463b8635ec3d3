import TureenStore
import TureenCore

@_cdecl("tureen_query")
public func tureen_query(_ store: OpaquePointer?, _ spec: UnsafePointer<CChar>?, _ pageIndex: Int32, _ json: OutString?) -> Int32 {
    boundary {
        let out = try outPointer(json, "json")
        out.pointee = nil
        let s = try Handles.store(store)
        try deliver(try s.query(try QuerySpec.parse(try inputString(spec, "query_spec_json")), pageIndex: Int(pageIndex)), to: out)
    }
}

@_cdecl("tureen_count")
public func tureen_count(_ store: OpaquePointer?, _ spec: UnsafePointer<CChar>?, _ count: UnsafeMutablePointer<Int64>?) -> Int32 {
    boundary {
        let out = try outPointer(count, "count")
        let s = try Handles.store(store)
        out.pointee = try s.count(try QuerySpec.parse(try inputString(spec, "query_spec_json")))
    }
}

@_cdecl("tureen_remove_by_query")
public func tureen_remove_by_query(_ store: OpaquePointer?, _ spec: UnsafePointer<CChar>?) -> Int32 {
    boundary {
        let s = try Handles.store(store)
        try s.removeByQuery(try QuerySpec.parse(try inputString(spec, "query_spec_json")))
    }
}
