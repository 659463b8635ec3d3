import TureenStore
import TureenSync
import TureenCore

public typealias EventFn = @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?) -> Void
public typealias FreeCtxFn = @convention(c) (UnsafeMutableRawPointer?) -> Void

/// The host's function and context as a closure, and its free_ctx as the
/// release the store calls exactly once.
private func listener(_ fn: EventFn?, _ ctx: UnsafeMutableRawPointer?, _ freeCtx: FreeCtxFn?) throws
    -> (callback: (String) -> Void, release: (() -> Void)?) {
    guard let fn = fn else { throw TureenError.misuse("fn is NULL") }
    return ({ text in text.withCString { fn(ctx, $0) } }, freeCtx.map { f in { f(ctx) } })
}

/// Registers with `add`, handing out a token; on any error free_ctx is not
/// called (the host still owns ctx).
private func register(_ store: OpaquePointer?, _ out: UnsafeMutablePointer<OpaquePointer?>?,
                      _ add: (Store) throws -> Int) -> Int32 {
    boundary {
        let out = try outPointer(out, "out (tureen_listener **)")
        out.pointee = nil
        let s = try Handles.store(store)
        out.pointee = Handles.listeners.register(ListenerToken(store: s, id: try add(s)))
    }
}

@_cdecl("tureen_soup_listen")
public func tureen_soup_listen(_ store: OpaquePointer?, _ soup: UnsafePointer<CChar>?, _ fn: EventFn?,
                               _ ctx: UnsafeMutableRawPointer?, _ freeCtx: FreeCtxFn?,
                               _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    register(store, out) { s in
        let name = try inputString(optional: soup, "soup")
        let (callback, release) = try listener(fn, ctx, freeCtx)
        return try s.listen(soup: name, callback, release: release)
    }
}

@_cdecl("tureen_live_query")
public func tureen_live_query(_ store: OpaquePointer?, _ spec: UnsafePointer<CChar>?, _ fn: EventFn?,
                              _ ctx: UnsafeMutableRawPointer?, _ freeCtx: FreeCtxFn?,
                              _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    register(store, out) { s in
        let q = try QuerySpec.parse(try inputString(spec, "query_spec_json"))
        let (callback, release) = try listener(fn, ctx, freeCtx)
        return try s.liveQuery(q, callback, release: release)
    }
}

@_cdecl("tureen_sync_listen")
public func tureen_sync_listen(_ store: OpaquePointer?, _ filter: UnsafePointer<CChar>?, _ fn: EventFn?,
                               _ ctx: UnsafeMutableRawPointer?, _ freeCtx: FreeCtxFn?,
                               _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    register(store, out) { s in
        let codes = try SyncEventCode.filter(try inputString(optional: filter, "filter_json"))
        let (callback, release) = try listener(fn, ctx, freeCtx)
        return try s.listenEngineEvents(codes: codes, callback, release: release)
    }
}

@_cdecl("tureen_listener_remove")
public func tureen_listener_remove(_ listener: OpaquePointer?) -> Int32 {
    boundary {
        let token = try Handles.listeners.get(listener)
        guard Handles.listeners.unregister(listener) != nil else {
            throw TureenError.misuse("listener handle was removed by another thread")
        }
        try token.store.removeListener(token.id)
    }
}
