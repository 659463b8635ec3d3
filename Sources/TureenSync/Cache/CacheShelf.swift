import TureenStore
import TureenCore

/// A cached answer as kept in `cache_soup`.
struct CachedAnswer {
    let entryId: Int64
    let data: JSON
    let storedAt: Int64
    let expiresAt: Int64?

    /// Its age at `now`; never negative, and no trap whatever the stored
    /// stamp (the store is the only writer, but a file is still input).
    func age(at now: Int64) -> Int64 {
        let (d, overflow) = now.subtractingReportingOverflow(storedAt)
        return overflow ? (now < storedAt ? 0 : .max) : max(0, d)
    }

    /// Fresh: within the lifetime it was stored with, and younger than the
    /// caller's time to live (when given).
    func isFresh(at now: Int64, ttl: Int64?) -> Bool {
        if let e = expiresAt, now >= e { return false }
        if let t = ttl, age(at: now) >= t { return false }
        return true
    }
}

/// Where cached answers live: entries of the engine soup `cache_soup`
/// {"key", "url", "id", "query", "data", "storedAt", "expiresAt", "bytes"},
/// one per request key, inside the encrypted store, with a least-recently-
/// used order (CacheTables) that keeps them within a size budget. Written
/// with origin "sync", so a listener on `cache_soup` hears of new answers.
/// The data's size is counted once, where it is fetched (`Fetched`).
struct CacheShelf {
    static let soup = "cache_soup"
    static let specs = [IndexSpec(path: "key", type: .string), IndexSpec(path: "storedAt", type: .integer)]
    let store: Store

    /// Makes the soup and its bookkeeping when missing; cheap otherwise.
    func prepare() throws {
        try store.registerEngineSoup(CacheShelf.soup, specs: CacheShelf.specs)
        try transaction { tx in try CacheTables.watch(tx) }
    }

    private func transaction<T>(_ body: (SoupTransaction) throws -> T) throws -> T {
        try store.withWriteTransaction(origin: .sync) { c in try body(try store.soupTransaction(c, CacheShelf.soup, keyPath: "key")) }
    }

    /// The answer cached under `key`, now the most recently used; nil when none.
    func read(_ key: String) throws -> CachedAnswer? {
        try transaction { tx in
            guard let id = try tx.entryId(key: .string(key)), let e = try tx.entry(id: id) else { return nil }
            try CacheTables.use(tx, id)
            // The soup can be read by the app but not written: still, an
            // entry that is not what this layer wrote is no answer.
            guard let stored = e["storedAt"]?.int64Value, let data = e["data"] else { return nil }
            return CachedAnswer(entryId: id, data: data, storedAt: stored, expiresAt: e["expiresAt"]?.int64Value)
        }
    }

    /// Stores `fetched` as the answer to `request`, then evicts the least
    /// recently used answers until all fit in the budget. An answer larger
    /// than the budget on its own is not stored (nil). The budget is read
    /// inside the write transaction, not when the answer was asked for: one
    /// fetched while the app lowered it (a refresh queued before, a slow
    /// server) must fit the new budget, and tureen_cache_configure sets it
    /// before its own transaction evicts, so either that eviction or this
    /// one sees it.
    func write(_ request: CacheRequest, _ fetched: Fetched, at now: Int64, ttl: Int64?, budget: () -> Int64) throws -> CachedAnswer? {
        let bytes = fetched.bytes, data = fetched.data
        let expires = ttl.map { now &+ $0 }  // both at most 2^50 (CacheOptions)
        var entry = JSONObject([("key", .string(request.key))])
        for m in request.summary.members { entry[m.key] = m.value }
        entry["data"] = data
        entry["storedAt"] = .int(now)
        entry["expiresAt"] = expires.map { .int($0) } ?? .null
        entry["bytes"] = .int(bytes)
        return try transaction { tx in
            let limit = budget()
            guard bytes <= limit else {
                Log.write(.warning, .sync, "cached fetch of \(Log.url(request.config.url)): the answer (\(bytes) bytes) is larger than the cache's max_bytes (\(limit)); not cached")
                return nil
            }
            let id = try tx.save(entry)
            try CacheTables.use(tx, id, bytes: bytes)
            try CacheShelf.evict(tx, downTo: limit, sparing: id)
            return CachedAnswer(entryId: id, data: data, storedAt: now, expiresAt: expires)
        }
    }

    /// Evicts least recently used answers until all fit in `budget`.
    func shrink(to budget: Int64) throws {
        try transaction { tx in try CacheShelf.evict(tx, downTo: budget, sparing: nil) }
    }

    private static func evict(_ tx: SoupTransaction, downTo budget: Int64, sparing keep: Int64?) throws {
        var total = try CacheTables.totalBytes(tx)
        while total > budget {
            let victims = try CacheTables.leastRecentlyUsed(tx, sparing: keep, limit: 64)
            if victims.isEmpty { break }
            for v in victims where total > budget {
                try tx.delete(id: v.id)
                total -= v.bytes
            }
        }
    }

    /// Removes the answer cached under `key` (nil: every answer); how many went.
    @discardableResult
    func remove(_ key: String?) throws -> Int64 {
        try transaction { tx in
            if let k = key {
                guard let id = try tx.entryId(key: .string(k)) else { return 0 }
                try tx.delete(id: id)
                return 1
            }
            let ids = try tx.keys().map(\.id)
            for id in ids { try tx.delete(id: id) }
            return Int64(ids.count)
        }
    }
}
