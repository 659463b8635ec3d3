import TureenStore
import TureenCore

/// The sync loop's configuration, with $fh.sync's names and defaults where
/// it has them (tureen.h, tureen_sync_loop_start, says what each means here).
public struct SyncLoopConfig: Sendable {
    enum Order: String, Sendable {
        case upDown = "up_down"
        case downUp = "down_up"
    }

    /// Sync ids or names to run; nil: every sync of the store, also those
    /// defined after the loop started.
    var syncs: [String]?
    var frequencyMs = 10_000
    var autoSyncLocalUpdates = true
    var active = true
    var crashedCountWait = 0
    var resendCrashedUpdates = true
    var order = Order.upDown
    var orderBySoup: [String: Order] = [:]
    /// How long a burst of local writes is let settle before sync up runs.
    var debounceMs = 200
    /// The longest wait between tries while the server is unreachable.
    var maxBackoffMs = 60_000

    public static func parse(_ text: String?) throws -> SyncLoopConfig {
        var c = SyncLoopConfig()
        guard let text = text else { return c }
        var r = try ConfigReader(try JSONParser.parse(text), "sync loop config")
        if let list = r.raw("syncs") {
            guard let items = list.arrayValue, !items.isEmpty else { throw r.bad("syncs", "a non-empty array of sync ids or names") }
            c.syncs = try items.map { v in
                if let s = v.stringValue { return s }
                if let i = v.int64Value { return String(i) }
                throw r.bad("syncs", "an array of sync ids or names")
            }
        }
        let seconds = try r.int("sync_frequency", 1...86_400)
        let ms = try r.int("sync_frequency_ms", 10...86_400_000)
        if seconds != nil && ms != nil { throw TureenError.invalid("give sync_frequency or sync_frequency_ms, not both") }
        c.frequencyMs = ms ?? seconds.map { $0 * 1000 } ?? c.frequencyMs
        c.autoSyncLocalUpdates = try r.bool("auto_sync_local_updates") ?? c.autoSyncLocalUpdates
        c.active = try r.bool("sync_active") ?? c.active
        c.crashedCountWait = try r.int("crashed_count_wait", 0...1_000_000) ?? c.crashedCountWait
        c.resendCrashedUpdates = try r.bool("resend_crashed_updates") ?? c.resendCrashedUpdates
        if let o = try r.string("order") { c.order = try order(o) }
        if let by = r.raw("order_by_soup") {
            guard let o = by.objectValue else { throw r.bad("order_by_soup", "an object of soup names to orders") }
            for m in o.members {
                guard let v = m.value.stringValue else { throw r.bad("order_by_soup", "an object of soup names to orders") }
                c.orderBySoup[m.key] = try order(v)
            }
        }
        c.debounceMs = try r.int("debounce_ms", 0...60_000) ?? c.debounceMs
        c.maxBackoffMs = try r.int("max_backoff_ms", 100...86_400_000) ?? c.maxBackoffMs
        try r.finish()
        return c
    }

    /// The order a cycle runs `syncs` in: a soup's syncs together, in the
    /// order configured for it, soups as they first come.
    func inCycleOrder(_ syncs: [SyncState]) -> [SyncState] {
        var soups: [String] = []
        for s in syncs where !soups.contains(s.soupName) { soups.append(s.soupName) }
        return soups.flatMap { soup -> [SyncState] in
            let first: SyncKind = (orderBySoup[soup] ?? order) == .upDown ? .up : .down
            let mine = syncs.filter { $0.soupName == soup }
            return mine.filter { $0.kind == first } + mine.filter { $0.kind != first }
        }
    }

    private static func order(_ s: String) throws -> Order {
        guard let o = Order(rawValue: s) else { throw TureenError.invalid("unknown cycle order '\(s)'; use up_down or down_up") }
        return o
    }
}
