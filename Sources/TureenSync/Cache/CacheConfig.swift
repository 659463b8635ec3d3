import TureenCore

/// The cache's configuration: {"max_bytes": n}, the size budget of every
/// answer it keeps (absent: the budget stays as it is).
public struct CacheConfig: Sendable {
    let maxBytes: Int64?

    public static func parse(_ text: String) throws -> CacheConfig {
        var r = try ConfigReader(try JSONParser.parse(text), "cache configuration")
        let budget = try r.int("max_bytes", 1024...(1 << 40)).map(Int64.init)
        try r.finish()
        return CacheConfig(maxBytes: budget)
    }
}
