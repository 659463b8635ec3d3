import TureenStore
import TureenCore

/// A declared JSON REST API: where records sit, how pages follow, how
/// changes are sent. The Kinto target is one preset of it (`kinto(_:)`).
struct RestConfig {
    enum Paging {
        case none
        case header(String)                          // the next page's URL in a header
        case cursor(path: String, param: String)     // a cursor in the body, sent back as a parameter
        case url(path: String)                       // the next page's URL in the body
        /// From the last page's stamp on, by a filter; the header only says
        /// more come (see StampCursor). Kinto's.
        /// `limit`: the page size parameter, raised by the records a page
        /// asks for again, so each still brings that many new ones.
        case stamps(filter: String, header: String, tieSort: (String, String), limit: (String, Int))
    }
    enum Concurrency {
        case none
        case ifMatch(format: String)   // If-Match built from the base's modification field; "{}" is the value
        case versionField(String)      // the base's version field sent in the body
    }

    var url: String
    /// Where blobs go: Kinto's attachments, or a REST target's "blobs".
    var blobs: BlobPlace?
    var http = HTTPSettings()
    var maxRetries = 5
    /// Fewer retries of network errors than `maxRetries`: set by the sync
    /// loop for its runs (RetryingSender), never by a target's JSON.
    var networkRetries: Int?
    var maxWaitMs = 60_000
    var idField = "id"
    var modifiedField = "last_modified"
    var recordsPath = ""
    var recordPath = ""
    var listParams: [(String, String)] = []
    var sinceParam: String?
    var sinceExclusive = true
    /// How far (ms) before its highest stamp an incremental sync down asks
    /// from: a server that stamps a record when its transaction starts and
    /// shows it when it commits (Kinto's PostgreSQL trigger, without
    /// packaging/kinto/commit_order.sql) can show a record after a later-
    /// stamped one; reading a window again finds it if it committed within
    /// the window. Integer stamps only (a date-time goes back unchanged).
    var sinceOverlapMs: Int64 = 0
    var sortParam: (String, String)?
    var sorted = false
    var paging = Paging.none
    var tombstone: (field: String, value: JSON)?
    /// A list parameter that picks one record by id; with sinceParam the
    /// list shows a deleted record's tombstone, which a GET of the record
    /// does not (Kinto: `?_since=0&id=...`).
    var idFilterParam: String?
    var createMethod = "PUT"
    var createIfNoneMatch = false
    var updateMethod = "PUT"
    var partialMethod: String?
    var concurrency = Concurrency.none
    var conflictRecordPath: String?
    var totalHeaders: [String] = []
    /// Ask for the total with a HEAD of the first page's URL before sync down
    /// (Kinto counts only for HEAD), so progress has a total from the start.
    var countWithHead = false
    var batchURL: String?
    /// How several changes go: in the kind's batch shape when `batchURL` is
    /// set (TargetKinds), else one request each.
    var batchFormat: BatchFormat = SingleWrites()
    var batchMax = 25
    /// Sync up: how many batches (or single requests) may be on the wire at
    /// once, each over its own connection; 1 sends them one after another.
    var uploadConnections = 1
    /// Kinto only: create the bucket and collection when missing.
    var ensure: [String] = []
    /// Kinto only: the server root, whose settings cap a batch.
    var serverRoot: String?
    /// Kinto only, on bucket "default": the collection's name (see
    /// RestTarget.userBucketRecordsURL).
    var defaultBucketCollection: String?
    /// A response header holding the collection's timestamp (Kinto's ETag):
    /// a first sync down resumes from it, so deletions made while it runs
    /// reach the device.
    var snapshotHeader: String?

    /// The name of the host's credential refresher (tureen_auth_register),
    /// asked for new credentials when the server answers 401.
    var authRefresh: String?

    /// The names of the host's transformers (tureen_transformer_register)
    /// records pass through, in encoding order.
    var transformers: [String] = []

    /// The keys of an "encryption" member (EncryptionTransformer).
    var encryption: EnvelopeKeys?
    /// The collection an encrypted record's envelope is bound to (its
    /// associated data): "bucket/collection" on Kinto, so a server moved to
    /// another URL still opens its records; a REST target's records URL.
    var sealedCollection = ""

    static func bearerHeader(_ token: String) throws -> String {
        guard token.utf8.allSatisfy(HeaderText.isValueByte) else {
            throw TureenError.invalid("target auth \"bearer\" holds a line break or another control character")
        }
        return "Bearer \(token)"
    }

    /// Replaces the credentials with `auth` ({"bearer"} or {"user", "password"}).
    static func apply(_ auth: JSONObject, to http: inout HTTPSettings) throws {
        http.headers.removeAll { $0.0.lowercased() == "authorization" }
        http.user = nil
        http.password = nil
        if let bearer = auth["bearer"]?.stringValue {
            http.headers.append(("Authorization", try bearerHeader(bearer)))
        } else if let user = auth["user"]?.stringValue {
            http.user = user
            http.password = auth["password"]?.stringValue ?? ""
        }
    }

    /// Parses a target spoken to over HTTP (TargetKinds).
    static func parse(_ target: JSON) throws -> RestConfig {
        let spec = try TargetKinds.parse(target)
        guard case .http(let c) = spec else {
            throw TureenError.invalid("a target of type '\(target["type"]?.stringValue ?? "")' is not spoken to over HTTP")
        }
        return c
    }

    /// The members every HTTP kind takes, read after the kind's own.
    static func common(_ r: inout ConfigReader, _ c: inout RestConfig) throws {
        if let auth = try r.object("auth") {
            var a = try ConfigReader(auth, "target auth")
            c.authRefresh = try a.string("refresh")
            if let bearer = try a.string("bearer") {
                c.http.headers.append(("Authorization", try bearerHeader(bearer)))
            } else if c.authRefresh == nil || auth["user"] != nil {
                c.http.user = try a.requiredString("user")
                c.http.password = try a.string("password") ?? ""
            }
            try a.finish()
        }
        c.http.headers += try r.stringMap("headers")
        c.http.timeoutMs = try r.int("timeout_ms", 100...3_600_000) ?? c.http.timeoutMs
        c.http.verifyTLS = try r.bool("verify_tls") ?? true
        c.http.maxResponseBytes = try r.int("max_response_bytes", 1024...(1 << 40)) ?? c.http.maxResponseBytes
        c.maxRetries = try r.int("max_retries", 0...20) ?? c.maxRetries
        c.maxWaitMs = try r.int("max_wait_ms", 0...3_600_000) ?? c.maxWaitMs
        c.uploadConnections = try r.int("upload_connections", 1...16) ?? c.uploadConnections
        c.transformers = try r.stringList("transformers") ?? []
        if let e = r.raw("encryption") {
            c.encryption = try EnvelopeKeys(parsing: e)
            try checkSealable(c)
        }
        // Compared as bytes: Swift sees "\r\n" as one Character, which
        // contains neither "\r" nor "\n", so a String search lets it through.
        for (k, v) in c.http.headers {
            guard !k.utf8.isEmpty, k.utf8.allSatisfy(HeaderText.isTokenByte) else {
                throw TureenError.invalid("target header name '\(HeaderText.printable(k))' is not an HTTP header name (letters, digits and !#$%&'*+-.^_`|~ only)")
            }
            guard v.utf8.allSatisfy(HeaderText.isValueByte) else {
                throw TureenError.invalid("the value of target header '\(k)' holds a line break or another control character")
            }
        }
        try URLText.checkTargetURL(c.url)
        if case .kinto(let place)? = c.blobs, let f = place.filesURL { try URLText.checkTargetURL(f) }
        for u in c.ensure + [c.batchURL, c.serverRoot].compactMap({ $0 }) { try URLText.checkTargetURL(u) }
    }

    /// An envelope keeps "id", "last_modified" and "deleted" in clear
    /// (RecordEnvelope): a target naming its fields otherwise, or marking
    /// deletions another way, would find none of its own in a sealed record.
    private static func checkSealable(_ c: RestConfig) throws {
        let tombstoneFits = c.tombstone.map { $0.field == "deleted" && $0.value == .bool(true) } ?? true
        guard c.idField == "id", c.modifiedField == "last_modified", tombstoneFits else {
            throw TureenError.invalid("encryption needs a target whose idField is \"id\", whose modifiedField is \"last_modified\" and whose tombstone, if any, is {\"field\": \"deleted\", \"value\": true}: those stay in clear on the server")
        }
    }

    /// The Kinto preset's members.
    static func kinto(_ r: inout ConfigReader) throws -> RestConfig {
        let base = try r.requiredString("url").trimmingSuffix("/")
        let bucket = try r.requiredString("bucket")
        let collection = try r.requiredString("collection")
        let pageSize = try r.int("page_size", 1...10_000) ?? 1000
        var c = RestConfig(url: "\(base)/buckets/\(URLText.component(bucket))/collections/\(URLText.component(collection))/records")
        let blobCollection = try r.string("blobs_collection") ?? collection + "-blobs"
        let blobsURL = "\(base)/buckets/\(URLText.component(bucket))/collections/\(URLText.component(blobCollection))"
        let create = try r.bool("create") == true
        c.blobs = .kinto(KintoAttachments.Place(records: blobsURL + "/records", filesURL: try r.string("attachments_url"), create: create))
        if create {
            c.ensure = ["\(base)/buckets/\(URLText.component(bucket))",
                        "\(base)/buckets/\(URLText.component(bucket))/collections/\(URLText.component(collection))"]
        }
        c.recordsPath = "data"
        c.recordPath = "data"
        c.listParams = [("_limit", String(pageSize))]
        c.sinceParam = "_since"
        // Kinto's batches commit well within a second on a sound server;
        // a late commit beyond the window is still missed (see README).
        c.sinceOverlapMs = try r.int("since_overlap_ms", 0...86_400_000).map(Int64.init) ?? 5000
        // Paged by stamp, not by Kinto's links: see StampCursor.
        c.sortParam = ("_sort", "last_modified")
        c.sorted = true
        c.paging = .stamps(filter: "min_last_modified", header: "Next-Page", tieSort: ("_sort", "last_modified,id"),
                           limit: ("_limit", pageSize))
        c.tombstone = ("deleted", .bool(true))
        c.idFilterParam = "id"
        c.createIfNoneMatch = true
        c.partialMethod = "PATCH"
        c.concurrency = .ifMatch(format: "\"{}\"")
        c.conflictRecordPath = "details.existing"
        c.totalHeaders = ["Total-Objects", "Total-Records"]
        c.countWithHead = true
        c.batchURL = "\(base)/batch"
        c.serverRoot = "\(base)/"
        if bucket == "default" { c.defaultBucketCollection = collection }
        c.sealedCollection = "\(bucket)/\(collection)"
        c.snapshotHeader = "ETag"
        return c
    }

    /// A declared REST API's members.
    static func rest(_ r: inout ConfigReader) throws -> RestConfig {
        var c = RestConfig(url: try r.requiredString("url").trimmingSuffix("/"))
        c.sealedCollection = c.url
        c.idField = try r.string("idField") ?? c.idField
        c.modifiedField = try r.string("modifiedField") ?? c.modifiedField
        c.recordsPath = r.raw("recordsPath")?.stringValue ?? ""
        c.recordPath = r.raw("recordPath")?.stringValue ?? ""
        c.listParams = try r.stringMap("params")
        if let s = try r.object("since") {
            var sr = try ConfigReader(s, "target since")
            c.sinceParam = try sr.requiredString("param")
            c.sinceExclusive = try sr.bool("exclusive") ?? true
            c.sinceOverlapMs = try sr.int("overlapMs", 0...86_400_000).map(Int64.init) ?? 0
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
        c.countWithHead = try r.bool("countWithHead") ?? false
        c.snapshotHeader = try r.string("snapshotHeader")
        if let b = r.raw("blobs") { c.blobs = .rest(try RestBlobs.Place.parse(b)) }
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

    /// A record id as one path segment. Dots are unreserved, so `component`
    /// keeps them, but a segment of only dots ("." or "..") would be resolved
    /// by libcurl (and proxies) into the collection or its parent: such a
    /// segment has its dots encoded too, so a request never leaves the
    /// collection, whatever id a server or an app planted.
    static func segment(_ s: String) -> String {
        if !s.isEmpty && s.utf8.allSatisfy({ $0 == 0x2E }) {
            return String(repeating: "%2E", count: s.utf8.count)
        }
        return component(s)
    }

    static func query(_ params: [(String, String)]) -> String {
        params.map { "\(component($0.0))=\(component($0.1))" }.joined(separator: "&")
    }

    /// Refuses a target URL that is not plain http(s) or holds bytes that
    /// would change the request line (spaces, controls) or credentials
    /// (which belong in "auth", where states can redact them).
    static func checkTargetURL(_ url: String) throws {
        let lower = url.lowercased()
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://") else {
            throw TureenError.invalid("target url '\(HeaderText.printable(url))' must start with http:// or https://")
        }
        guard url.utf8.allSatisfy({ $0 > 0x20 && $0 != 0x7F }) else {
            throw TureenError.invalid("target url '\(HeaderText.printable(url))' holds a space or a control character")
        }
        let authority = origin(url).split(separator: "/", omittingEmptySubsequences: true).last ?? ""
        if authority.contains("@") {
            throw TureenError.invalid("target url must not hold credentials; give them in \"auth\"")
        }
    }

    /// Whether `url` is an http(s) URL under one of `prefixes` (an origin
    /// followed by "/" stands for the whole origin), holding no ".." that
    /// a server could resolve out of it.
    ///
    /// The origins must be equal, not merely share a start: "http://h:80"
    /// is not under "http://h:8", nor "https://files.example.com.evil.net/"
    /// under "https://files.example.com". Dots written as %2E count as
    /// dots: servers decode them before resolving a path.
    static func isUnder(_ url: String, anyOf prefixes: [String]) -> Bool {
        guard !holdsDotDot(url), (try? checkTargetURL(url)) != nil else { return false }
        let (origin, path) = split(url)
        return prefixes.contains { prefix in
            let (o, p) = split(prefix)
            return o == origin && path.hasPrefix(p.isEmpty ? "/" : p)
        }
    }

    /// Whether `url` holds "..", with %2E (either case) read as ".".
    static func holdsDotDot(_ url: String) -> Bool {
        let u = Array(url.utf8)
        var dots = 0
        var i = 0
        while i < u.count {
            if u[i] == 0x2E {
                dots += 1
                i += 1
            } else if u[i] == 0x25, i + 2 < u.count, u[i + 1] == 0x32, u[i + 2] | 0x20 == 0x65 {
                dots += 1
                i += 3
            } else {
                dots = 0
                i += 1
            }
            if dots >= 2 { return true }
        }
        return false
    }

    /// The origin of an absolute URL (lowercased, as `origin`) and the rest
    /// (path, query, fragment) as written.
    private static func split(_ url: String) -> (String, Substring) {
        let parts = url.split(separator: "://", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return ("", Substring("")) }
        let authority = parts[1].prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        return ((parts[0] + "://" + authority).lowercased(), parts[1][authority.endIndex...])
    }

    /// "scheme://authority" of an absolute URL, lowercased.
    static func origin(_ url: String) -> String { split(url).0 }

    /// Whether `next` (a page link a server sent) stays on `base`: the same
    /// origin and path, only the query may differ. A link elsewhere would
    /// send the target's credentials to whoever the server names.
    static func staysOn(_ base: String, _ next: String) -> Bool {
        guard next.utf8.allSatisfy({ $0 > 0x20 && $0 != 0x7F }) else { return false }
        let o = origin(base)
        return !o.isEmpty && origin(next) == o && path(base) == path(next)
    }

    /// The path of an absolute URL: after the authority, before "?" or "#".
    private static func path(_ url: String) -> Substring {
        guard let r = url.utf8.firstRange(of: "://".utf8) else { return "" }
        let rest = url[r.upperBound...].drop { $0 != "/" && $0 != "?" && $0 != "#" }
        return rest.prefix { $0 != "?" && $0 != "#" }
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

/// What may go into a request header Tureen writes.
enum HeaderText {
    /// RFC 9110 token characters: a header name.
    static func isTokenByte(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
            || "!#$%&'*+-.^_`|~".utf8.contains(b)
    }

    /// A header value: visible text, spaces and tabs; never CR, LF or NUL.
    static func isValueByte(_ b: UInt8) -> Bool { b == 0x09 || (b >= 0x20 && b != 0x7F) }

    /// A text for a message, with control bytes shown as escapes.
    static func printable(_ s: String) -> String {
        var out = ""
        for u in s.unicodeScalars {
            if u.value < 0x20 || u.value == 0x7F { out += "\\x" + String(u.value, radix: 16) } else { out.unicodeScalars.append(u) }
        }
        return out
    }
}
