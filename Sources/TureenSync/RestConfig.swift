import TureenStore

/// A declared JSON REST API: where records sit, how pages follow, how
/// changes are sent. The Kinto target is one preset of it (`kinto(_:)`).
struct RestConfig {
    enum Paging {
        case none
        case header(String)                          // the next page's URL in a header
        case cursor(path: String, param: String)     // a cursor in the body, sent back as a parameter
        case url(path: String)                       // the next page's URL in the body
    }
    enum Concurrency {
        case none
        case ifMatch(format: String)   // If-Match built from the base's modification field; "{}" is the value
        case versionField(String)      // the base's version field sent in the body
    }

    var url: String
    var http = HTTPSettings()
    var maxRetries = 5
    var idField = "id"
    var modifiedField = "last_modified"
    var recordsPath = ""
    var recordPath = ""
    var listParams: [(String, String)] = []
    var sinceParam: String?
    var sinceExclusive = true
    var sortParam: (String, String)?
    var sorted = false
    var paging = Paging.none
    var tombstone: (field: String, value: JSON)?
    var createMethod = "PUT"
    var createIfNoneMatch = false
    var updateMethod = "PUT"
    var partialMethod: String?
    var concurrency = Concurrency.none
    var conflictRecordPath: String?
    var totalHeaders: [String] = []
    var batchURL: String?
    var batchMax = 25
    /// Kinto only: create the bucket and collection when missing.
    var ensure: [String] = []

    /// Parses a target of type "rest" or "kinto".
    static func parse(_ target: JSON) throws -> RestConfig {
        var r = try ConfigReader(target, "target")
        let type = try r.requiredString("type")
        var c: RestConfig
        switch type {
        case "kinto": c = try kinto(&r)
        case "rest": c = try rest(&r)
        default: throw TureenError.invalid("unknown target type '\(type)'; known: kinto, rest, callback")
        }
        try common(&r, &c)
        try r.finish()
        return c
    }

    private static func common(_ r: inout ConfigReader, _ c: inout RestConfig) throws {
        if let auth = try r.object("auth") {
            var a = try ConfigReader(auth, "target auth")
            if let bearer = try a.string("bearer") {
                c.http.headers.append(("Authorization", "Bearer \(bearer)"))
            } else {
                c.http.user = try a.requiredString("user")
                c.http.password = try a.string("password") ?? ""
            }
            try a.finish()
        }
        c.http.headers += try r.stringMap("headers")
        c.http.timeoutMs = try r.int("timeout_ms", 100...3_600_000) ?? c.http.timeoutMs
        c.http.verifyTLS = try r.bool("verify_tls") ?? true
        c.maxRetries = try r.int("max_retries", 0...20) ?? c.maxRetries
        for (k, _) in c.http.headers where k.contains("\r") || k.contains("\n") || k.contains(":") {
            throw TureenError.invalid("target header name '\(k)' is not a header name")
        }
        for (_, v) in c.http.headers where v.contains("\r") || v.contains("\n") {
            throw TureenError.invalid("a target header value holds a line break")
        }
    }

    private static func kinto(_ r: inout ConfigReader) throws -> RestConfig {
        let base = try r.requiredString("url").trimmingSuffix("/")
        let bucket = try r.requiredString("bucket")
        let collection = try r.requiredString("collection")
        let pageSize = try r.int("page_size", 1...10_000) ?? 1000
        var c = RestConfig(url: "\(base)/buckets/\(URLText.component(bucket))/collections/\(URLText.component(collection))/records")
        if try r.bool("create") == true {
            c.ensure = ["\(base)/buckets/\(URLText.component(bucket))",
                        "\(base)/buckets/\(URLText.component(bucket))/collections/\(URLText.component(collection))"]
        }
        c.recordsPath = "data"
        c.recordPath = "data"
        c.listParams = [("_limit", String(pageSize))]
        c.sinceParam = "_since"
        c.sortParam = ("_sort", "last_modified")
        c.sorted = true
        c.paging = .header("Next-Page")
        c.tombstone = ("deleted", .bool(true))
        c.createIfNoneMatch = true
        c.partialMethod = "PATCH"
        c.concurrency = .ifMatch(format: "\"{}\"")
        c.conflictRecordPath = "details.existing"
        c.totalHeaders = ["Total-Objects", "Total-Records"]
        c.batchURL = "\(base)/batch"
        return c
    }

    private static func rest(_ r: inout ConfigReader) throws -> RestConfig {
        var c = RestConfig(url: try r.requiredString("url").trimmingSuffix("/"))
        c.idField = try r.string("idField") ?? c.idField
        c.modifiedField = try r.string("modifiedField") ?? c.modifiedField
        c.recordsPath = try r.raw("recordsPath")?.stringValue ?? ""
        c.recordPath = try r.raw("recordPath")?.stringValue ?? ""
        c.listParams = try r.stringMap("params")
        if let s = try r.object("since") {
            var sr = try ConfigReader(s, "target since")
            c.sinceParam = try sr.requiredString("param")
            c.sinceExclusive = try sr.bool("exclusive") ?? true
            try sr.finish()
        }
        if let s = try r.object("sort") {
            var sr = try ConfigReader(s, "target sort")
            c.sortParam = (try sr.requiredString("param"), try sr.requiredString("value"))
            try sr.finish()
        }
        c.sorted = try r.bool("sortedByModification") ?? (c.sortParam != nil)
        if let p = try r.object("nextPage") {
            var pr = try ConfigReader(p, "target nextPage")
            if let h = try pr.string("header") {
                c.paging = .header(h)
            } else if let path = try pr.string("cursorPath") {
                c.paging = .cursor(path: path, param: try pr.requiredString("cursorParam"))
            } else if let path = try pr.string("urlPath") {
                c.paging = .url(path: path)
            } else {
                throw TureenError.invalid("target nextPage needs \"header\", \"cursorPath\" with \"cursorParam\", or \"urlPath\"")
            }
            try pr.finish()
        }
        if let t = try r.object("tombstone") {
            var tr = try ConfigReader(t, "target tombstone")
            c.tombstone = (try tr.requiredString("field"), tr.raw("value") ?? .bool(true))
            try tr.finish()
        }
        c.createMethod = try method(r.string("create"), ["PUT", "POST"], "create") ?? "PUT"
        c.createIfNoneMatch = try r.bool("createIfNoneMatch") ?? false
        c.updateMethod = try method(r.string("update"), ["PUT", "PATCH"], "update") ?? "PUT"
        c.partialMethod = try method(r.string("partialUpdate"), ["PATCH", "PUT"], "partialUpdate")
        if let k = try r.object("concurrency") {
            var kr = try ConfigReader(k, "target concurrency")
            if let f = try kr.string("ifMatch") {
                guard f.contains("{}") else { throw TureenError.invalid("target concurrency \"ifMatch\" must contain {} where the version goes") }
                c.concurrency = .ifMatch(format: f)
            } else if let v = try kr.string("versionField") {
                c.concurrency = .versionField(v)
            }
            try kr.finish()
        }
        c.conflictRecordPath = try r.string("conflictRecordPath")
        c.totalHeaders = try r.string("totalHeader").map { [$0] } ?? []
        if let b = try r.object("batch") {
            var br = try ConfigReader(b, "target batch")
            c.batchURL = try br.requiredString("url")
            c.batchMax = try br.int("max", 1...1000) ?? 25
            try br.finish()
        }
        return c
    }

    private static func method(_ m: String?, _ allowed: [String], _ what: String) throws -> String? {
        guard let m = m else { return nil }
        guard allowed.contains(m.uppercased()) else {
            throw TureenError.invalid("target \"\(what)\" must be one of \(allowed.joined(separator: ", "))")
        }
        return m.uppercased()
    }
}

extension String {
    func trimmingSuffix(_ s: String) -> String {
        var t = self
        while t.hasSuffix(s) { t.removeLast(s.count) }
        return t
    }
}

/// Percent-encoding for the parts of a URL Tureen builds itself.
enum URLText {
    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    /// Every byte but RFC 3986's unreserved ones as %XX: right for a path
    /// segment and for a query name or value alike.
    static func component(_ s: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(s.utf8.count)
        for b in s.utf8 {
            let unreserved = (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
                || b == 0x2D || b == 0x2E || b == 0x5F || b == 0x7E
            if unreserved {
                out.append(b)
            } else {
                out += [0x25, hexDigits[Int(b >> 4)], hexDigits[Int(b & 15)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func query(_ params: [(String, String)]) -> String {
        params.map { "\(component($0.0))=\(component($0.1))" }.joined(separator: "&")
    }

    /// The path and query of an absolute URL (what a batch request names).
    static func pathAndQuery(_ url: String) -> String {
        let parts = url.split(separator: "://", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return url }
        let rest = parts[1]
        guard let slash = rest.firstIndex(of: "/") else { return "/" }
        return String(rest[slash...])
    }
}
