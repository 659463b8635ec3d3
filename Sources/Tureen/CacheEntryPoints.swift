import TureenStore
import TureenSync
import TureenCore

// Cached reads: tureen.h, "Cached reads".

@_cdecl("tureen_cache_fetch")
public func tureen_cache_fetch(_ store: OpaquePointer?, _ request: UnsafePointer<CChar>?, _ options: UnsafePointer<CChar>?,
                               _ json: OutString?) -> Int32 {
    boundary {
        let out = try outPointer(json, "json")
        out.pointee = nil
        let answer = try Handles.serving(store) { m in
            let r = try inputString(request, "request_json")
            let o = try inputString(optional: options, "options_json")
            return try m.cachedFetch(try CacheRequest.parse(r), options: try CacheOptions.parse(o))
        }
        try deliver(answer, to: out)
    }
}

@_cdecl("tureen_cache_clear")
public func tureen_cache_clear(_ store: OpaquePointer?, _ request: UnsafePointer<CChar>?, _ removed: UnsafeMutablePointer<Int64>?) -> Int32 {
    boundary {
        removed?.pointee = 0
        let m = try Handles.syncManager(store)
        let r = try inputString(optional: request, "request_json")
        let n = try m.clearCache(try r.map(CacheRequest.parse))  // not in the optional chain: it must run
        removed?.pointee = n
    }
}

@_cdecl("tureen_cache_configure")
public func tureen_cache_configure(_ store: OpaquePointer?, _ config: UnsafePointer<CChar>?) -> Int32 {
    boundary {
        let m = try Handles.syncManager(store)
        try m.configureCache(try CacheConfig.parse(try inputString(config, "config_json")))
    }
}
