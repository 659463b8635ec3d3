import TureenStore

/// What a cached fetch asks for: {"target": a "kinto" or "rest" target,
/// "id": a record id (optional), "query": {"param": value, ...} (optional)}.
/// With an id it is one record (GET <records URL>/<id>); without, the list
/// of records the query selects, every page. Its cache key names the place,
/// the resource and the user, never a password, token or header value.
struct CacheRequest {
    /// The target as given, credentials included: used for the request,
    /// never stored with the answer.
    let target: JSON
    let config: RestConfig
    let id: String?
    /// Query parameters, sorted by name, so that the same query in any
    /// member order is one cache entry.
    let query: [(String, String)]
    /// The cache key (JSON text) and what is kept beside the answer.
    let key: String
    let summary: JSONObject

    init(_ json: JSON) throws {
        var r = try ConfigReader(json, "cache request")
        guard let t = try r.object("target") else { throw TureenError.invalid("cache request needs \"target\"") }
        if t["type"]?.stringValue == "callback" {
            throw TureenError.invalid("a cached fetch reads a \"kinto\" or \"rest\" target over HTTP; callback targets serve syncs only")
        }
        target = t
        config = try RestConfig.parse(t)
        id = try r.string("id")
        var q: [(String, String)] = []
        if let o = try r.object("query")?.objectValue {
            for m in o.members {
                guard let v = CacheRequest.parameterText(m.value) else {
                    throw r.bad("query", "an object of strings, numbers or booleans (\"\(m.key)\" is not)")
                }
                q.append((m.key, v))
            }
        }
        try r.finish()
        if id != nil && !q.isEmpty { throw TureenError.invalid("cache request takes \"id\" or \"query\", not both") }
        query = q.sorted { $0.0 < $1.0 }
        // Different accounts may see different data: the user name is part
        // of the key. A bearer token is not (it is a secret, and a refreshed
        // one must still find the answers cached under the old).
        let user = t["auth"]?["user"]
        let queryObject = JSON.object(JSONObject(query.map { ($0.0, .string($0.1)) }))
        summary = JSONObject([("url", .string(config.url)), ("id", id.map { .string($0) } ?? .null),
                              ("query", id == nil ? queryObject : .null)])
        var keyed = summary
        keyed["user"] = user ?? .null
        key = JSONWriter.string(.object(keyed))
    }

    /// A query value as the URL carries it.
    private static func parameterText(_ v: JSON) -> String? {
        switch v {
        case .string(let s): return s
        case .int(let i): return String(i)
        case .double: return JSONWriter.string(v)
        case .bool(let b): return b ? "true" : "false"
        default: return nil
        }
    }
}
