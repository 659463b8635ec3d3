import TureenStore
import TureenCore

public typealias LogFn = @convention(c) (UnsafeMutableRawPointer?, Int32, UnsafePointer<CChar>?, UnsafePointer<CChar>?) -> Void

/// The host's log context, released (free_ctx) when the last log call that
/// may use it has returned: a sink replaced while another thread logs keeps
/// its context until that call ends.
private final class LogContext: @unchecked Sendable {
    // Unchecked: immutable; the header tells the host its sink runs on any thread.
    let ctx: UnsafeMutableRawPointer?
    let freeCtx: FreeCtxFn?
    init(_ ctx: UnsafeMutableRawPointer?, _ freeCtx: FreeCtxFn?) {
        self.ctx = ctx
        self.freeCtx = freeCtx
    }
    deinit { freeCtx?(ctx) }
}

@_cdecl("tureen_log_set")
public func tureen_log_set(_ level: Int32, _ fn: LogFn?, _ ctx: UnsafeMutableRawPointer?, _ freeCtx: FreeCtxFn?) -> Int32 {
    boundary {
        guard let l = Log.Level(rawValue: level) else {
            throw TureenError.invalid("log level \(level) is not one of TUREEN_LOG_OFF (0) .. TUREEN_LOG_DEBUG (4)")
        }
        guard let fn = fn else {
            Log.set(level: l, sink: nil)
            freeCtx?(ctx)  // nothing keeps it
            return
        }
        let box = LogContext(ctx, freeCtx)
        Log.set(level: l, sink: { level, category, message in
            category.rawValue.withCString { c in message.withCString { m in fn(box.ctx, level.rawValue, c, m) } }
        })
    }
}
