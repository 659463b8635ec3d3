import TureenStore
import TureenCore

/// The cached-fetch layer's entry points (tureen.h, "Cached reads"), kept by
/// the store handle's sync manager with the HTTP state it shares (Kinto's
/// Backoff pauses, credential refreshers).
extension SyncManager {
    /// The size budget of the cache of this handle, in bytes.
    public static let defaultCacheBudget: Int64 = 32 << 20

    public func cachedFetch(request text: String, options: String?) throws -> String {
        let request = try CacheRequest(try JSONParser.parse(text))
        let options = try CacheOptions.parse(options)
        return try CachedFetch(manager: self, request: request, options: options).run(cancel: CancelFlag())
    }

    /// Removes the answer to one request (its JSON, as for cachedFetch), or
    /// every answer (nil); returns how many were removed.
    public func clearCache(request text: String?) throws -> Int64 {
        let key = try text.map { try CacheRequest(try JSONParser.parse($0)).key }
        try prepareCache()
        return try CacheShelf(store: store).remove(key)
    }

    /// {"max_bytes": N}: the budget, applied at once.
    public func configureCache(_ text: String) throws {
        var r = try ConfigReader(try JSONParser.parse(text), "cache configuration")
        let budget = try r.int("max_bytes", 1024...(1 << 40)).map(Int64.init)
        try r.finish()
        guard let b = budget else { return }
        lock.withLock { cacheBudgetBytes = b }
        try prepareCache()
        try CacheShelf(store: store).shrink(to: b)
    }

    /// Makes the cache's soup and tables, once per handle (the app cannot
    /// drop an engine soup, so once made they stay).
    func prepareCache() throws {
        if lock.withLock({ cachePrepared }) { return }
        try CacheShelf(store: store).prepare()
        lock.withLock { cachePrepared = true }
    }

    var cacheBudget: Int64 { lock.withLock { cacheBudgetBytes } }

    /// Ends background refreshes before the store closes.
    func stopCacheRefresher() { cacheRefresher.stop() }
}
