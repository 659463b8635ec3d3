import TureenStore
import TureenSync
import TureenCore

// Managed syncs, record errors and reset: tureen.h, "Managed syncs".

/// Hands the manager's answer to `json` (NULL on error).
private func answer(_ store: OpaquePointer?, _ json: OutString?, _ text: (SyncManager) throws -> String) -> Int32 {
    boundary {
        let out = try outPointer(json, "json")
        out.pointee = nil
        try deliver(try text(try Handles.syncManager(store)), to: out)
    }
}

@_cdecl("tureen_syncs")
public func tureen_syncs(_ store: OpaquePointer?, _ json: OutString?) -> Int32 {
    answer(store, json) { try $0.list() }
}

@_cdecl("tureen_sync_update")
public func tureen_sync_update(_ store: OpaquePointer?, _ sync: UnsafePointer<CChar>?, _ target: UnsafePointer<CChar>?,
                               _ options: UnsafePointer<CChar>?) -> Int32 {
    boundary {
        let m = try Handles.syncManager(store)
        let id = try inputString(sync, "sync_id_or_name")
        let t = try inputString(optional: target, "target_json")
        let o = try inputString(optional: options, "options_json")
        _ = try m.update(id, target: try t.map(TargetSpec.parse), options: try o.map(SyncOptions.parse))
    }
}

@_cdecl("tureen_sync_delete")
public func tureen_sync_delete(_ store: OpaquePointer?, _ sync: UnsafePointer<CChar>?) -> Int32 {
    boundary { try Handles.syncManager(store).delete(try inputString(sync, "sync_id_or_name")) }
}

@_cdecl("tureen_sync_error_resolve")
public func tureen_sync_error_resolve(_ store: OpaquePointer?, _ soup: UnsafePointer<CChar>?, _ entryId: Int64,
                                      _ action: UnsafePointer<CChar>?) -> Int32 {
    boundary {
        let m = try Handles.syncManager(store)
        let s = try inputString(soup, "soup")
        try m.resolveError(soup: s, entryId: entryId, action: try ErrorAction.parse(try inputString(action, "action")))
    }
}

@_cdecl("tureen_sync_reset")
public func tureen_sync_reset(_ store: OpaquePointer?) -> Int32 {
    boundary { try Handles.syncManager(store).reset() }
}

@_cdecl("tureen_sync_loop_start")
public func tureen_sync_loop_start(_ store: OpaquePointer?, _ config: UnsafePointer<CChar>?) -> Int32 {
    boundary {
        let m = try Handles.syncManager(store)
        try m.startLoop(try SyncLoopConfig.parse(try inputString(optional: config, "config_json")))
    }
}

@_cdecl("tureen_sync_loop_stop")
public func tureen_sync_loop_stop(_ store: OpaquePointer?) -> Int32 {
    boundary {
        guard try Handles.syncManager(store).stopLoop() else { throw TureenError.misuse("no sync loop is running on this store handle") }
    }
}

@_cdecl("tureen_sync_loop_force")
public func tureen_sync_loop_force(_ store: OpaquePointer?, _ sync: UnsafePointer<CChar>?) -> Int32 {
    // Without a loop the syncs run here: a call that talks to a server.
    boundary { try Handles.serving(store) { m in try m.forceLoop(try inputString(optional: sync, "sync_id_or_name")) } }
}

@_cdecl("tureen_sync_loop_status")
public func tureen_sync_loop_status(_ store: OpaquePointer?, _ json: OutString?) -> Int32 {
    answer(store, json) { try $0.loopStatus() }
}

@_cdecl("tureen_sync_republish")
public func tureen_sync_republish(_ store: OpaquePointer?, _ sync: UnsafePointer<CChar>?, _ count: UnsafeMutablePointer<Int64>?) -> Int32 {
    boundary {
        count?.pointee = 0
        let n = try Handles.syncManager(store).republish(try inputString(sync, "sync_id_or_name"))
        count?.pointee = Int64(n)
    }
}
