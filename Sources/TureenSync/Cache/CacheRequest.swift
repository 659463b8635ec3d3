import TureenStore
import TureenCore

/// What a cached fetch asks for: {"target": a "kinto" or "rest" target,
/// "id": a record id (optional), "query": {"param": value, ...} (optional)}.
/// With an id it is one record (GET <records URL>/<id>); without, the list
/// of records the query selects, every page. Its cache key names the place,
/// the resource and the user, never a password, token or header value.
public struct CacheRequest {
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

    /// The longest id taken, in bytes. An id is a path segment (up to three
    /// times as long once percent-encoded); servers refuse request lines
    /// past about 8 KiB, libcurl a URL past 8,000,000 bytes. Refused here,
    /// an id too long is the caller's error, said before any request.
    static let maxIdBytes = 4096

    public static func parse(_ text: String) throws -> CacheRequest { try CacheRequest(try JSONParser.parse(text)) }

    init(_ json: JSON) throws {
        var r = try ConfigReader(json, "cache request")
        guard let t = try r.object("target") else { throw TureenError.invalid("cache request needs \"target\"") }
        if let kind = TargetKinds.kind(of: t), !kind.overHTTP {
            throw TureenError.invalid("a cached fetch reads a \"kinto\" or \"rest\" target over HTTP; callback targets serve syncs only")
        }
        target = t
        config = try RestConfig.parse(t)
        id = try r.string("id")
        if let i = id, i.utf8.count > CacheRequest.maxIdBytes {
            throw r.bad("id", "at most \(CacheRequest.maxIdBytes) bytes (it is \(i.utf8.count))")
        }
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
        // Given, even empty: {} asks for every record, which an id contradicts.
        if id != nil, json["query"].map({ $0 != .null }) ?? false {
            throw TureenError.invalid("cache request takes \"id\" or \"query\", not both")
        }
        query = q.sorted { $0.0 < $1.0 }
        let queryObject = JSON.object(JSONObject(query.map { ($0.0, .string($0.1)) }))
        summary = JSONObject([("url", .string(config.url)), ("id", id.map { .string($0) } ?? .null),
                              ("query", id == nil ? queryObject : .null)])
        var keyed = summary
        keyed["user"] = t["auth"]?["user"] ?? .null
        if let account = try CacheRequest.account(t) { keyed["account"] = .string(account) }
        key = JSONWriter.string(.object(keyed))
    }

    /// Who the answers belong to when the target names no "user": different
    /// accounts may see different data, and a bearer token or a header
    /// (an API key) is all that tells them apart. The refresher's name when
    /// the token comes from one (a refreshed token still finds the answers
    /// cached under the old); else a SHA-256 digest of the token and the
    /// headers, so that the key holds no secret and two accounts never share
    /// answers. nil for a target with a "user" or no credentials at all.
    private static func account(_ t: JSON) throws -> String? {
        let auth = t["auth"]
        if auth?["user"] != nil { return nil }
        if let refresher = auth?["refresh"]?.stringValue { return "refresh:" + refresher }
        var secret: [UInt8] = []
        if let bearer = auth?["bearer"]?.stringValue { secret += Array("bearer".utf8) + [0] + Array(bearer.utf8) + [0] }
        let headers = (t["headers"]?.objectValue?.members ?? []).map { (String($0.key.lowercased()), $0.value.stringValue ?? "") }
        for (name, value) in headers.sorted(by: { $0.0 < $1.0 }) {
            secret += Array(name.utf8) + [0] + Array(value.utf8) + [0]
        }
        if secret.isEmpty { return nil }
        return try "sha256:" + Hex.string(SHA256.digest(secret))
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
