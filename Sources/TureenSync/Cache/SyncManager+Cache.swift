import TureenStore
import TureenCore

/// The cached-fetch layer's entry points (tureen.h, "Cached reads"), kept by
/// the store handle's sync manager with the HTTP state it shares (Kinto's
/// Backoff pauses, credential refreshers).
extension SyncManager {
    /// The size budget of the cache of this handle, in bytes.
    public static let defaultCacheBudget: Int64 = 32 << 20

    public func cachedFetch(_ request: CacheRequest, options: CacheOptions) throws -> String {
        return try CachedFetch(manager: self, request: request, options: options).run(cancel: CancelFlag())
    }

    /// Removes the answer to one request (its JSON, as for cachedFetch), or
    /// every answer (nil); returns how many were removed.
    public func clearCache(_ request: CacheRequest?) throws -> Int64 {
        try prepareCache()
        return try CacheShelf(store: store).remove(request?.key)
    }

    /// {"max_bytes": N}: the budget, applied at once.
    public func configureCache(_ config: CacheConfig) throws {
        guard let b = config.maxBytes else { return }
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
