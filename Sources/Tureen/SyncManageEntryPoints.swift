import TureenStore
import TureenSync

/// Managed syncs, record errors and reset: tureen.h, "Managed syncs".
private func manager(_ store: OpaquePointer?) throws -> SyncManager { SyncManager.of(try Handles.store(store)) }

/// Hands the manager's answer to `json` (NULL on error).
private func answer(_ store: OpaquePointer?, _ json: OutString?, _ text: (SyncManager) throws -> String) -> Int32 {
    boundary {
        let out = try outPointer(json, "json")
        out.pointee = nil
        try deliver(try text(try manager(store)), to: out)
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
        let m = try manager(store)
        let id = try inputString(sync, "sync_id_or_name")
        let t = try target.map { try inputString($0, "target_json") }
        let o = try options.map { try inputString($0, "options_json") }
        _ = try m.update(id, target: t, options: o)
    }
}

@_cdecl("tureen_sync_delete")
public func tureen_sync_delete(_ store: OpaquePointer?, _ sync: UnsafePointer<CChar>?) -> Int32 {
    boundary { try manager(store).delete(try inputString(sync, "sync_id_or_name")) }
}

@_cdecl("tureen_sync_error_resolve")
public func tureen_sync_error_resolve(_ store: OpaquePointer?, _ soup: UnsafePointer<CChar>?, _ entryId: Int64,
                                      _ action: UnsafePointer<CChar>?) -> Int32 {
    boundary {
        try manager(store).resolveError(soup: try inputString(soup, "soup"), entryId: entryId,
                                        action: try inputString(action, "action"))
    }
}

@_cdecl("tureen_sync_reset")
public func tureen_sync_reset(_ store: OpaquePointer?) -> Int32 {
    boundary { try manager(store).reset() }
}

@_cdecl("tureen_sync_loop_start")
public func tureen_sync_loop_start(_ store: OpaquePointer?, _ config: UnsafePointer<CChar>?) -> Int32 {
    boundary { try manager(store).startLoop(config: try config.map { try inputString($0, "config_json") }) }
}

@_cdecl("tureen_sync_loop_stop")
public func tureen_sync_loop_stop(_ store: OpaquePointer?) -> Int32 {
    boundary {
        guard try manager(store).stopLoop() else { throw TureenError.misuse("no sync loop is running on this store handle") }
    }
}

@_cdecl("tureen_sync_loop_force")
public func tureen_sync_loop_force(_ store: OpaquePointer?, _ sync: UnsafePointer<CChar>?) -> Int32 {
    boundary { try manager(store).forceLoop(try sync.map { try inputString($0, "sync_id_or_name") }) }
}

@_cdecl("tureen_sync_loop_status")
public func tureen_sync_loop_status(_ store: OpaquePointer?, _ json: OutString?) -> Int32 {
    answer(store, json) { try $0.loopStatus() }
}

@_cdecl("tureen_sync_republish")
public func tureen_sync_republish(_ store: OpaquePointer?, _ sync: UnsafePointer<CChar>?, _ count: UnsafeMutablePointer<Int64>?) -> Int32 {
    boundary {
        count?.pointee = 0
        let n = try manager(store).republish(try inputString(sync, "sync_id_or_name"))
        count?.pointee = Int64(n)
    }
}
