import TureenStore
import TureenCore

/// The options of one cached fetch: {"policy", "ttl_ms", "now_ms"}, all
/// optional.
public struct CacheOptions: Sendable {
    /// Server first, the cache when the server cannot be used: fresh data
    /// online, an answer offline.
    var policy = CachePolicy.reloadAndReturnCacheOnError
    /// How old a cached answer may be for this call to count it fresh; also
    /// the lifetime of the answer this call stores. nil: no limit.
    var ttlMs: Int64?
    /// The time to judge ages by (epoch ms); nil: the wall clock. For hosts
    /// with a clock of their own, and for tests of expiry.
    var nowMs: Int64?

    public static func parse(_ text: String?) throws -> CacheOptions {
        var o = CacheOptions()
        guard let text = text else { return o }
        var r = try ConfigReader(try JSONParser.parse(text), "cache options")
        if let p = try r.string("policy") { o.policy = try CachePolicy.named(p) }
        o.ttlMs = try r.int("ttl_ms", 1...(1 << 50)).map(Int64.init)
        o.nowMs = try r.int("now_ms", 0...(1 << 50)).map(Int64.init)
        try r.finish()
        return o
    }

    var now: Int64 { nowMs ?? Clock.nowMs() }
}
