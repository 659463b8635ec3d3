import TureenSync
import TureenCore

/// The layout of `tureen_transformer` in tureen.h: its version, then five
/// pointers in order.
struct CTransformer {
    static let version: Int32 = 1
    var version: Int32
    var ctx: UnsafeMutableRawPointer?
    var encode: HostFn?
    var decode: HostFn?
    var release: (@convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<CChar>?) -> Void)?
    var freeCtx: (@convention(c) (UnsafeMutableRawPointer?) -> Void)?
}

@_cdecl("tureen_transformer_register")
public func tureen_transformer_register(_ store: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ transformer: UnsafeRawPointer?) -> Int32 {
    boundary {
        let m = try Handles.syncManager(store)
        let n = try inputString(name, "name")
        let t = try versioned(transformer, CTransformer.self, CTransformer.version, "tureen_transformer",
                              "TUREEN_TRANSFORMER_INIT", argument: "transformer")
        guard let encode = t.encode, let decode = t.decode, let release = t.release else {
            let null = [("encode", t.encode == nil), ("decode", t.decode == nil), ("release", t.release == nil)]
            throw TureenError.invalid("a transformer needs encode, decode and release (NULL: \(null.filter { $0.1 }.map { $0.0 }.joined(separator: ", ")))")
        }
        let ctx = t.ctx
        let freeCtx = t.freeCtx
        try m.registerTransformer(n, HostTransformer(encode: hostCall(encode, release, ctx), decode: hostCall(decode, release, ctx),
                                                     release: { freeCtx?(ctx) }))
    }
}

@_cdecl("tureen_transformer_remove")
public func tureen_transformer_remove(_ store: OpaquePointer?, _ name: UnsafePointer<CChar>?) -> Int32 {
    boundary {
        try Handles.syncManager(store).removeTransformer(try inputString(name, "name"))
    }
}

@_cdecl("tureen_reencrypt")
public func tureen_reencrypt(_ store: OpaquePointer?, _ target: UnsafePointer<CChar>?, _ json: OutString?) -> Int32 {
    boundary {
        let out = try outPointer(json, "json")
        out.pointee = nil
        let m = try Handles.syncManager(store)
        let spec = try TargetSpec.parse(try inputString(target, "target_json"))
        let result = try Handles.serving(store) { _ in try m.reencrypt(spec) }
        try deliver(result.text, to: out)
    }
}
