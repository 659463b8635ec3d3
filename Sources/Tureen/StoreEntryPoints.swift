import TureenStore
import TureenSync
import TureenCore

@_cdecl("tureen_store_open")
public func tureen_store_open(_ path: UnsafePointer<CChar>?, _ options: UnsafePointer<CChar>?,
                              _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    boundary {
        let out = try outPointer(out, "out (tureen_store **)")
        out.pointee = nil
        let path = try inputString(path, "path")
        var opts = try StoreOptions.parseOpen(try inputString(options, "options_json"))
        opts.callNames = .c
        out.pointee = Handles.register(Session(try Store.open(path: path, options: opts)))
    }
}

@_cdecl("tureen_store_close")
public func tureen_store_close(_ store: OpaquePointer?) -> Int32 {
    boundary {
        let session = try Handles.session(store)
        let s = session.store
        try session.close {
            Handles.sessions.unregister(store)
            // Its listener tokens and blob streams go stale with it; close
            // releases the listeners themselves, and a writer's staging
            // pieces are collected later.
            _ = Handles.listeners.unregisterAll { $0.store === s }
            _ = Handles.blobWriters.unregisterAll { $0.store === s }
            _ = Handles.blobReaders.unregisterAll { $0.store === s }
        }
    }
}

@_cdecl("tureen_store_interrupt")
public func tureen_store_interrupt(_ store: OpaquePointer?) -> Int32 {
    boundary { try Handles.store(store).interruptQueries() }
}

@_cdecl("tureen_store_rekey")
public func tureen_store_rekey(_ store: OpaquePointer?, _ options: UnsafePointer<CChar>?) -> Int32 {
    boundary {
        let s = try Handles.store(store)
        try s.rekey(try StoreOptions.parseRekey(try inputString(options, "options_json")))
    }
}

@_cdecl("tureen_store_size")
public func tureen_store_size(_ store: OpaquePointer?, _ bytes: UnsafeMutablePointer<Int64>?) -> Int32 {
    boundary {
        let out = try outPointer(bytes, "bytes")
        out.pointee = try Handles.store(store).size()
    }
}

@_cdecl("tureen_store_remove")
public func tureen_store_remove(_ path: UnsafePointer<CChar>?) -> Int32 {
    boundary { try Store.remove(path: try inputString(path, "path")) }
}
