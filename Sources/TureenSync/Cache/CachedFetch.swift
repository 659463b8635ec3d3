import TureenStore
import TureenCore

/// One cached fetch: the policy decides between the cache and the server,
/// and the answer says which it came from and how old it is:
/// {"source": "server"|"cache"|null, "data", "storedAt", "ageMs",
///  "expiresAt", "expired", "cached", "refreshing", "error"}.
struct CachedFetch {
    let manager: SyncManager
    let request: CacheRequest
    let options: CacheOptions
    var shelf: CacheShelf { CacheShelf(store: manager.store) }

    /// The most pages a list of records may take: a server that pages for
    /// ever cannot hold the call (its size is bounded by max_response_bytes).
    static let maxPages = 10_000

    func run(cancel: CancelFlag) throws -> String {
        let now = options.now
        try manager.prepareCache()
        switch options.policy {
        case .ignoreCacheData:
            return answer(.server, data: try fetch(cancel).data, cached: nil, now: now)
        case .invalidateCacheDontReload:
            try shelf.remove(request.key)
            return answer(nil, data: .null, cached: nil, now: now)
        case .invalidateCacheAndReload:
            try shelf.remove(request.key)
            return try reload(cancel, now: now)
        case .reloadAndReturnCacheData:
            // The old answer stays cached when the server cannot be used, but
            // is not given: SmartSync falls back only under ...OnFailure.
            return try reload(cancel, now: now)
        case .returnCacheDataDontReload:
            guard let c = try shelf.read(request.key) else {
                throw TureenError(.notFound, "nothing is cached for this request (policy ReturnCacheDataDontReload never asks the server)")
            }
            return answer(.cache, data: c.data, cached: c, now: now)
        case .returnCacheDataAndReload:
            guard let c = try shelf.read(request.key) else { return try reload(cancel, now: now) }
            let started = manager.cacheRefresher.enqueue(request, options, for: manager)
            return answer(.cache, data: c.data, cached: c, now: now, refreshing: started)
        case .reloadIfExpiredAndReturnCacheData, .local:
            let c = try shelf.read(request.key)
            if let c = c, c.isFresh(at: now, ttl: options.ttlMs) { return answer(.cache, data: c.data, cached: c, now: now) }
            return try reload(cancel, now: now) { options.policy == .local ? nil : c }
        case .reloadAndReturnCacheOnError, .server:
            // The cache is read only if the server fails: a successful
            // reload neither parses the old answer nor counts it as used.
            return try reload(cancel, now: now) { try shelf.read(request.key) }
        }
    }

    /// Asks the server and caches its answer. When the server cannot be
    /// used (unreachable, timed out, 5xx, 429, asking to wait), answers
    /// with `fallback` if the policy takes it; other failures (401, 403, a
    /// refused request) are the server's answer and are returned as errors.
    /// A record the server does not have is removed from the cache too.
    private func reload(_ cancel: CancelFlag, now: Int64, fallback: () throws -> CachedAnswer? = { nil }) throws -> String {
        let fetched: Fetched
        do {
            fetched = try fetch(cancel)
        } catch let e as TureenError {
            if e.code == .notFound { try shelf.remove(request.key) }
            guard CachedFetch.serverUnusable(e), options.policy.fallback != .none,
                  let c = try fallback(), usable(c, now: now) else { throw e }
            return answer(.cache, data: c.data, cached: c, now: now, error: e.message)
        }
        let stored = try shelf.write(request, fetched, at: now, ttl: options.ttlMs, budget: { manager.cacheBudget })
        return answer(.server, data: fetched.data, cached: stored, now: now)
    }

    private func usable(_ c: CachedAnswer, now: Int64) -> Bool {
        switch options.policy.fallback {
        case .none: return false
        case .any: return true
        case .fresh: return c.isFresh(at: now, ttl: options.ttlMs)
        }
    }

    static func serverUnusable(_ e: TureenError) -> Bool {
        switch e.code {
        case .network: return true
        case .http: return e.retryAt != nil || (e.httpStatus.map { $0 >= 500 || $0 == 429 } ?? false)
        default: return false
        }
    }

    /// The resource from the server: one record, or every record of the
    /// query, with its size as JSON text (serialised once, here).
    func fetch(_ cancel: CancelFlag) throws -> Fetched {
        let params = request.query
        let target = try manager.makeTarget(request.target, cancel: cancel) { c in
            // The query's parameters replace the target's own of the same
            // name; a sort of the query's replaces the target's.
            let names = Set(params.map(\.0))
            c.listParams = c.listParams.filter { !names.contains($0.0) } + params
            // A query is read whole in its own order, not as a feed: by the
            // server's links, which the sort by stamp and id keeps whole.
            if case .stamps(_, let header, let tieSort, _) = c.paging {
                c.paging = .header(header)
                c.sortParam = tieSort
            }
            if let s = c.sortParam, names.contains(s.0) { c.sortParam = nil }
        }
        guard let rest = target.recordReads else { throw TureenError.invalid("a cached fetch needs a \"kinto\" or \"rest\" target") }
        defer { rest.abandon() }
        if let id = request.id {
            guard let record = try rest.get(id: id) else {
                throw TureenError(.notFound, "the server has no record '\(HeaderText.printable(String(id.prefix(200))))' at \(Log.url(request.config.url))")
            }
            let data = JSON.object(record)
            return Fetched(data: data, bytes: Int64(JSONWriter.string(data).utf8.count))
        }
        var records: [JSON] = []
        var bytes = 0
        var next: JSON?
        // A server that links back to a page already read would be asked
        // for it again until maxPages, minutes of requests for an answer
        // that holds its records many times over: refused at once, as sync
        // down refuses it.
        var trail = PageTrail(of: "cached fetch")
        for _ in 0..<CachedFetch.maxPages {
            let page = try rest.fetch(since: nil, next: next)
            for r in page.records where !rest.isTombstone(r) {
                bytes += JSONWriter.string(.object(r)).utf8.count
                records.append(.object(r))
            }
            if bytes > request.config.http.maxResponseBytes {
                throw TureenError(.http, "cached fetch of \(Log.url(request.config.url)): the records are larger than the target's max_response_bytes (\(request.config.http.maxResponseBytes) bytes) in all; nothing was used")
            }
            // The array's text: the records, a comma between each two, brackets.
            guard let n = page.next else { return Fetched(data: .array(records), bytes: Int64(bytes + max(records.count - 1, 0) + 2)) }
            try trail.follow(n)
            next = n
        }
        throw TureenError(.http, "cached fetch of \(Log.url(request.config.url)): the server went on paging past \(CachedFetch.maxPages) pages; nothing was used")
    }

    enum Source: String { case server, cache }
}

/// What the server answered, and its size as compact JSON text.
struct Fetched {
    let data: JSON
    let bytes: Int64
}

extension CachedFetch {

    private func answer(_ source: Source?, data: JSON, cached: CachedAnswer?, now: Int64, refreshing: Bool = false,
                        error: String? = nil) -> String {
        func int(_ v: Int64?) -> JSON { v.map { .int($0) } ?? .null }
        let o = JSONObject([
            ("source", source.map { .string($0.rawValue) } ?? .null),
            ("data", data),
            ("storedAt", int(cached?.storedAt)),
            ("ageMs", int(cached.map { $0.age(at: now) })),
            ("expiresAt", int(cached?.expiresAt)),
            ("expired", .bool(cached.map { !$0.isFresh(at: now, ttl: nil) } ?? false)),
            ("cached", .bool(cached != nil)),
            ("refreshing", .bool(refreshing)),
            ("error", error.map { .string($0) } ?? .null),
        ])
        return JSONWriter.string(.object(o))
    }
}
