import TureenStore
import TureenSync
import TureenCore

public typealias ProgressFn = @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?) -> Void
typealias HostFn = @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?, UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32

/// The layout of `tureen_callbacks` in tureen.h: its version, then seven
/// pointers in order (Swift lays these out as C does: the int, padding, the
/// pointers).
struct CCallbacks {
    static let version: Int32 = 1
    var version: Int32
    var ctx: UnsafeMutableRawPointer?
    var fetch: HostFn?
    var create: HostFn?
    var update: HostFn?
    var remove: HostFn?
    var release: (@convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<CChar>?) -> Void)?
    var freeCtx: (@convention(c) (UnsafeMutableRawPointer?) -> Void)?
}

private func progressClosure(_ fn: ProgressFn?, _ ctx: UnsafeMutableRawPointer?) -> ((String) -> Void)? {
    guard let fn = fn else { return nil }
    return { state in state.withCString { fn(ctx, $0) } }
}

/// Hands over the state, then reports how the sync ended.
private func finish(_ result: SyncResult, _ out: OutString?) throws {
    if let out = out { try deliver(result.state, to: out) }
    if let e = result.error { throw e }
}

/// Sync down and sync up take the same arguments and differ in one call.
private func startSync(_ store: OpaquePointer?, _ target: UnsafePointer<CChar>?, _ soup: UnsafePointer<CChar>?,
                       _ options: UnsafePointer<CChar>?, _ progress: ProgressFn?, _ ctx: UnsafeMutableRawPointer?,
                       _ state: OutString?,
                       _ start: (SyncManager) -> (TargetSpec, String, SyncOptions, ((String) -> Void)?) throws -> SyncResult) -> Int32 {
    boundary {
        state?.pointee = nil
        let r = try Handles.serving(store) { m in
            let t = try inputString(target, "target_json"), s = try inputString(soup, "soup")
            let o = try inputString(optional: options, "options_json")
            return try start(m)(try TargetSpec.parse(t), s, try SyncOptions.parse(o), progressClosure(progress, ctx))
        }
        try finish(r, state)
    }
}

@_cdecl("tureen_sync_down")
public func tureen_sync_down(_ store: OpaquePointer?, _ target: UnsafePointer<CChar>?, _ soup: UnsafePointer<CChar>?,
                             _ options: UnsafePointer<CChar>?, _ progress: ProgressFn?, _ ctx: UnsafeMutableRawPointer?,
                             _ state: OutString?) -> Int32 {
    startSync(store, target, soup, options, progress, ctx, state) { m in m.syncDown }
}

@_cdecl("tureen_sync_up")
public func tureen_sync_up(_ store: OpaquePointer?, _ target: UnsafePointer<CChar>?, _ soup: UnsafePointer<CChar>?,
                           _ options: UnsafePointer<CChar>?, _ progress: ProgressFn?, _ ctx: UnsafeMutableRawPointer?,
                           _ state: OutString?) -> Int32 {
    startSync(store, target, soup, options, progress, ctx, state) { m in m.syncUp }
}

@_cdecl("tureen_resync")
public func tureen_resync(_ store: OpaquePointer?, _ sync: UnsafePointer<CChar>?, _ progress: ProgressFn?,
                          _ ctx: UnsafeMutableRawPointer?, _ state: OutString?) -> Int32 {
    boundary {
        state?.pointee = nil
        let r = try Handles.serving(store) { m in
            try m.resync(try inputString(sync, "sync_id_or_name"), progress: progressClosure(progress, ctx))
        }
        try finish(r, state)
    }
}

@_cdecl("tureen_sync_status")
public func tureen_sync_status(_ store: OpaquePointer?, _ sync: UnsafePointer<CChar>?, _ state: OutString?) -> Int32 {
    boundary {
        let out = try outPointer(state, "state_json")
        out.pointee = nil
        let m = try Handles.syncManager(store)
        try deliver(try m.status(try inputString(sync, "sync_id_or_name")), to: out)
    }
}

@_cdecl("tureen_sync_cancel")
public func tureen_sync_cancel(_ store: OpaquePointer?, _ sync: UnsafePointer<CChar>?) -> Int32 {
    boundary {
        try Handles.syncManager(store).cancel(try inputString(sync, "sync_id_or_name"))
    }
}

@_cdecl("tureen_clean_ghosts")
public func tureen_clean_ghosts(_ store: OpaquePointer?, _ sync: UnsafePointer<CChar>?, _ removed: UnsafeMutablePointer<Int64>?) -> Int32 {
    boundary {
        let out = try outPointer(removed, "removed")
        out.pointee = 0
        let n = try Handles.serving(store) { m in try m.cleanGhosts(try inputString(sync, "sync_id_or_name")) }
        out.pointee = Int64(n)
    }
}

/// tureen_local_upsert and tureen_local_merge differ only in what a stored
/// entry keeps.
private func localWrite(_ store: OpaquePointer?, _ soup: UnsafePointer<CChar>?, _ entries: UnsafePointer<CChar>?,
                        _ idField: UnsafePointer<CChar>?, _ json: OutString?, merge: Bool) -> Int32 {
    boundary {
        json?.pointee = nil
        let m = try Handles.syncManager(store)
        let w = try m.localUpsert(soup: try inputString(soup, "soup"), entries: try inputString(entries, "entries_json"),
                                  idField: try inputString(optional: idField, "id_field"), merge: merge)
        if let out = json { try deliver(w, to: out) }
    }
}

@_cdecl("tureen_local_upsert")
public func tureen_local_upsert(_ store: OpaquePointer?, _ soup: UnsafePointer<CChar>?, _ entries: UnsafePointer<CChar>?,
                                _ idField: UnsafePointer<CChar>?, _ json: OutString?) -> Int32 {
    localWrite(store, soup, entries, idField, json, merge: false)
}

@_cdecl("tureen_local_merge")
public func tureen_local_merge(_ store: OpaquePointer?, _ soup: UnsafePointer<CChar>?, _ entries: UnsafePointer<CChar>?,
                               _ idField: UnsafePointer<CChar>?, _ json: OutString?) -> Int32 {
    localWrite(store, soup, entries, idField, json, merge: true)
}

@_cdecl("tureen_local_read")
public func tureen_local_read(_ store: OpaquePointer?, _ soup: UnsafePointer<CChar>?, _ idField: UnsafePointer<CChar>?,
                              _ ids: UnsafePointer<CChar>?, _ json: OutString?) -> Int32 {
    boundary {
        let out = try outPointer(json, "json")
        out.pointee = nil
        let s = try Handles.store(store)
        let name = try inputString(soup, "soup")
        let field = try inputString(optional: idField, "id_field_or_null") ?? "id"
        let recordIds = try RecordIdList.parse(try inputString(ids, "record_ids_json"))
        try deliver(try s.retrieve(soup: name, idField: field, recordIds: recordIds), to: out)
    }
}

@_cdecl("tureen_local_delete")
public func tureen_local_delete(_ store: OpaquePointer?, _ soup: UnsafePointer<CChar>?, _ ids: UnsafePointer<CChar>?) -> Int32 {
    boundary {
        let m = try Handles.syncManager(store)
        try m.localDelete(soup: try inputString(soup, "soup"), ids: try EntryIdList.parse(try inputString(ids, "ids_json")))
    }
}

@_cdecl("tureen_local_delete_records")
public func tureen_local_delete_records(_ store: OpaquePointer?, _ soup: UnsafePointer<CChar>?, _ idField: UnsafePointer<CChar>?,
                                        _ ids: UnsafePointer<CChar>?) -> Int32 {
    boundary {
        let m = try Handles.syncManager(store)
        try m.localDelete(soup: try inputString(soup, "soup"),
                          recordIds: try RecordIdList.parse(try inputString(ids, "record_ids_json")),
                          idField: try inputString(optional: idField, "id_field_or_null"))
    }
}

@_cdecl("tureen_conflicts")
public func tureen_conflicts(_ store: OpaquePointer?, _ soup: UnsafePointer<CChar>?, _ json: OutString?) -> Int32 {
    boundary {
        let out = try outPointer(json, "json")
        out.pointee = nil
        let m = try Handles.syncManager(store)
        try deliver(try m.conflicts(soup: try inputString(soup, "soup")), to: out)
    }
}

@_cdecl("tureen_conflict_resolve")
public func tureen_conflict_resolve(_ store: OpaquePointer?, _ soup: UnsafePointer<CChar>?, _ entryId: Int64,
                                    _ resolution: UnsafePointer<CChar>?, _ merged: UnsafePointer<CChar>?) -> Int32 {
    boundary {
        let m = try Handles.syncManager(store)
        let s = try inputString(soup, "soup")
        let r = try ConflictResolution.parse(try inputString(resolution, "resolution"), merged: try inputString(optional: merged, "merged_json"))
        try m.resolveConflict(soup: s, entryId: entryId, resolution: r)
    }
}

/// A host function as a closure: the request in, the status and the text of
/// the response out, the response handed back to the host's release once.
func hostCall(_ fn: @escaping HostFn,
                      _ release: @escaping @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<CChar>?) -> Void,
                      _ ctx: UnsafeMutableRawPointer?) -> (String) -> (status: Int32, response: String?) {
    { request in
        var response: UnsafeMutablePointer<CChar>?
        let status = request.withCString { fn(ctx, $0, &response) }
        guard let r = response else { return (status, nil) }
        let text = String(validatingCString: r)
        release(ctx, r)
        return (status, text)
    }
}

/// A host's struct that starts with its version: read whole only once the
/// version matches, since a struct of another version may be shorter.
func versioned<T>(_ raw: UnsafeRawPointer?, _ type: T.Type, _ version: Int32, _ name: String,
                  _ initMacro: String, argument: String = "callbacks") throws -> T {
    guard let raw = raw else { throw TureenError.misuse("\(argument) is NULL") }
    let found = raw.loadUnaligned(as: Int32.self)
    guard found == version else {
        throw TureenError.invalid("\(name).version is \(found); this library knows version \(version) (set it with \(initMacro))")
    }
    return raw.loadUnaligned(as: T.self)
}

@_cdecl("tureen_target_register")
public func tureen_target_register(_ store: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ callbacks: UnsafeRawPointer?) -> Int32 {
    boundary {
        let m = try Handles.syncManager(store)
        let n = try inputString(name, "name")
        let cb = try versioned(callbacks, CCallbacks.self, CCallbacks.version, "tureen_callbacks", "TUREEN_CALLBACKS_INIT")
        guard let fetch = cb.fetch, let release = cb.release else {
            throw TureenError.invalid("callbacks need at least fetch and release")
        }
        let ctx = cb.ctx
        let freeCtx = cb.freeCtx
        func wrap(_ fn: HostFn) -> HostTarget.Call { hostCall(fn, release, ctx) }
        try m.registerTarget(n, HostTarget(fetch: wrap(fetch), create: cb.create.map(wrap), update: cb.update.map(wrap),
                                           remove: cb.remove.map(wrap), release: { freeCtx?(ctx) }))
    }
}

@_cdecl("tureen_target_unregister")
public func tureen_target_unregister(_ store: OpaquePointer?, _ name: UnsafePointer<CChar>?) -> Int32 {
    boundary {
        try Handles.syncManager(store).unregisterTarget(try inputString(name, "name"))
    }
}

/// The layout of `tureen_auth_callbacks` in tureen.h: its version, then four pointers.
struct CAuthCallbacks {
    static let version: Int32 = 1
    var version: Int32
    var ctx: UnsafeMutableRawPointer?
    var refresh: HostFn?
    var release: (@convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<CChar>?) -> Void)?
    var freeCtx: (@convention(c) (UnsafeMutableRawPointer?) -> Void)?
}

@_cdecl("tureen_auth_register")
public func tureen_auth_register(_ store: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ callbacks: UnsafeRawPointer?) -> Int32 {
    boundary {
        let m = try Handles.syncManager(store)
        let n = try inputString(name, "name")
        let cb = try versioned(callbacks, CAuthCallbacks.self, CAuthCallbacks.version, "tureen_auth_callbacks",
                               "TUREEN_AUTH_CALLBACKS_INIT")
        guard let refresh = cb.refresh, let release = cb.release else {
            throw TureenError.invalid("auth callbacks need refresh and release")
        }
        let ctx = cb.ctx
        let freeCtx = cb.freeCtx
        try m.registerAuth(n, HostAuth(refresh: hostCall(refresh, release, ctx), release: { freeCtx?(ctx) }))
    }
}

@_cdecl("tureen_auth_unregister")
public func tureen_auth_unregister(_ store: OpaquePointer?, _ name: UnsafePointer<CChar>?) -> Int32 {
    boundary {
        try Handles.syncManager(store).unregisterAuth(try inputString(name, "name"))
    }
}
