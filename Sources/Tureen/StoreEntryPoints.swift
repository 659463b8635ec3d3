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
        let opts = try StoreOptions.parseOpen(try inputString(options, "options_json"))
        EngineSoups.reserve()
        out.pointee = Handles.register(try Store.open(path: path, options: opts))
    }
}

@_cdecl("tureen_store_close")
public func tureen_store_close(_ store: OpaquePointer?) -> Int32 {
    boundary {
        let s = try Handles.store(store)
        try s.refuseCloseDuringOthersTransaction()
        Handles.unregister(store)
        // This thread's own transaction ends first: a call that forget
        // waits for may be waiting for the write lock it holds.
        try? s.rollbackTransaction()
        SyncManager.forget(s)  // stops and waits for the calls talking to servers; releases callback targets
        // Its listener tokens go stale; close releases the listeners themselves.
        _ = Handles.listeners.unregisterAll { $0.store === s }
        // So do its blob streams; a writer's staging pieces are collected later.
        _ = Handles.blobWriters.unregisterAll { $0.store === s }
        _ = Handles.blobReaders.unregisterAll { $0.store === s }
        try s.close()
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
