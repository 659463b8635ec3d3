import TureenStore
import TureenCore

/// A sync target over HTTP, driven by a RestConfig.
final class RestTarget: SyncTarget {
    let config: RestConfig
    let sender: RetryingSender
    /// Raised by the sync's cancel, or by `abandon` alone.
    private let stop: CancelFlag
    private let pauses: ServerPauses?
    /// Learnt by `userBucketRecordsURL`, on the thread that fetches.
    var userBucketURL: String?
    /// The extra connections of a parallel sync up (see `extraConnection`),
    /// made and read on the sync's thread.
    private var extras: [RestTarget] = []

    init(_ config: RestConfig, cancel: CancelFlag, pauses: ServerPauses? = nil) throws {
        self.config = config
        self.pauses = pauses
        stop = CancelFlag(parent: cancel)
        sender = RetryingSender(client: try HTTPClient(config.http), maxRetries: config.maxRetries,
                                networkRetries: config.networkRetries, maxWaitMs: config.maxWaitMs, cancel: stop,
                                pause: pauses.map { ($0, URLText.origin(config.url)) })
        batchLimit = config.batchMax
    }

    /// Changes per batch: the target's "max", lowered to what the server
    /// advertises once `readServerLimits` has asked it.
    private var batchLimit: Int

    func abandon() { stop.raise() }

    var idField: String { config.idField }
    var modifiedField: String { config.modifiedField }
    var sortedByModification: Bool { config.sorted }
    var batchSize: Int { config.batchURL == nil ? 1 : batchLimit }
    var requestCount: Int { extras.reduce(sender.requestCount) { $0 + $1.requestCount } }
    var mayHaveArrivedCount: Int? { extras.reduce(sender.mayHaveArrivedCount) { $0 + $1.sender.mayHaveArrivedCount } }
    var fetchesOnAnyThread: Bool { true }

    /// The host's credential refresher, its name, and the target it serves.
    var session: (auth: HostAuth, name: String, target: JSON)?
    /// Credentials the refresher gave during this run, to keep for the next.
    var refreshedAuth: JSONObject? { extras.lazy.compactMap { $0.refreshedAuth }.first ?? ownRefreshedAuth }
    private var ownRefreshedAuth: JSONObject?

    /// Another connection to the same server, for one of sync up's parallel
    /// batches: this target's settings (credentials refreshed so far
    /// included), batch size, server pauses and session; stopped with it,
    /// and its requests and refreshed credentials count as this target's.
    /// Use it on one thread at a time.
    func extraConnection() throws -> SyncTarget {
        let t = try RestTarget(config, cancel: stop, pauses: pauses)
        t.sender.client.settings = sender.client.settings
        t.batchLimit = batchLimit
        t.session = session
        extras.append(t)
        return t
    }

    /// Sends a request. A 401 with a session asks the host for credentials
    /// and sends the request once more; then 401 and 403 end the sync at
    /// once (retrying cannot help, and every later request would fail the
    /// same way).
    func send(_ request: HTTPRequest) throws -> HTTPResponse {
        var response = try sender.send(request)
        if response.status == 401, let s = session {
            let auth = try s.auth.credentials(name: s.name, target: s.target, status: 401)
            var settings = sender.client.settings
            try RestConfig.apply(auth, to: &settings)
            sender.client.settings = settings
            ownRefreshedAuth = auth
            Log.write(.info, .sync, "\(request.method) \(Log.url(request.url)): 401; new credentials from '\(s.name)', sent again")
            response = try sender.send(request)
        }
        if response.status == 401 || response.status == 403 {
            throw TureenError(.http, "\(request.method) \(request.url): \(response.summary) (check the target's auth)")
        }
        return response
    }

    /// Reads the batch size the server accepts (Kinto's root lists
    /// settings.batch_max_requests); a batch over it is refused whole. A
    /// server that does not say keeps the target's "max".
    func readServerLimits() throws {
        guard let root = config.serverRoot, config.batchURL != nil else { return }
        let r = try send(HTTPRequest(method: "GET", url: root))
        guard r.isSuccess, let n = (try? r.json())?.at("settings.batch_max_requests")?.int64Value, n >= 1 else { return }
        batchLimit = min(batchLimit, Int(n))
    }

    func fetch(since position: FeedPosition?, next: JSON?) throws -> FetchPage {
        let since = try FeedPosition.stamp(of: position)
        if case .stamps(let filter, let header, let tieSort, let limit) = config.paging {
            let cursor = StampCursor(next)
            if next != nil && cursor == nil { throw TureenError(.internal, "a sync down's page position was lost") }
            return try fetchByStamp(since: since, cursor: cursor, filter: filter, header: header, tieSort: tieSort, limit: limit)
        }
        var url: String
        if let next = next, case .string(let u) = next, !isCursorPaging {
            url = try followable(u)
        } else {
            url = listURL(since: since, cursor: next)
        }
        return try page(from: try send(HTTPRequest(method: "GET", url: url)), url: url)
    }

    /// A next-page link the server gave, if it stays on the target's
    /// collection (on Kinto's bucket "default": or on that collection in
    /// the user's own bucket, which the alias stands for).
    func followable(_ link: String) throws -> String {
        if !URLText.staysOn(config.url, link), try userBucketRecordsURL().map({ URLText.staysOn($0, link) }) != true {
            throw TureenError(.http, "the server's next-page link leaves the target's collection (\(HeaderText.printable(String(link.prefix(200))))); it was not followed")
        }
        return link
    }

    /// One page of the feed, read from the server's answer to `url`.
    func page(from r: HTTPResponse, url: String) throws -> FetchPage {
        guard r.isSuccess else { throw TureenError(.http, "GET \(url): \(r.summary)", httpStatus: r.status) }
        let (body, spans) = try r.json(elementsAt: config.recordsPath.split(separator: ".").map(String.init))
        guard let list = body.at(config.recordsPath)?.arrayValue else {
            throw TureenError(.http, "GET \(url): the response has no array of records at \"\(config.recordsPath)\"")
        }
        var records: [JSONObject] = []
        records.reserveCapacity(list.count)
        for v in list {
            guard let o = v.objectValue else { throw TureenError(.http, "GET \(url): a record is not a JSON object") }
            records.append(o)
        }
        var page = FetchPage(records: records, texts: spans.map { RecordTexts(body: r.body, spans: $0) })
        for h in config.totalHeaders { if let t = r.header(h).flatMap({ Int($0) }) { page.total = t; break } }
        if let h = config.snapshotHeader, let v = r.header(h) {
            // An ETag is quoted ("1700000000000"), or weak (W/"..."); the stamp is the digits.
            page.snapshot = Int64(String(v.utf8.filter { $0 >= 0x30 && $0 <= 0x39 }.map { Character(UnicodeScalar($0)) }))
        }
        switch config.paging {
        case .none: break
        case .header(let h), .stamps(_, let h, _, _): page.next = r.header(h).map { .string($0) }
        case .cursor(let path, _): page.next = body.at(path).flatMap { $0 == .null || $0 == .string("") ? nil : $0 }
        case .url(let path): page.next = body.at(path).flatMap { $0.stringValue.map { .string($0) } }
        }
        return page
    }

    /// The list URL for records changed after `since`, at `cursor`;
    /// `overriding` replaces the target's parameters of the same names
    /// (its sort included) or comes after them.
    func listURL(since: Stamp?, cursor next: JSON?, strictlyPast: Bool = false,
                 overriding extra: [(String, String)] = []) -> String {
        var params = config.listParams
        if let p = config.sortParam { params.append(p) }
        if !extra.isEmpty {
            let names = Set(extra.map(\.0))
            params = params.filter { !names.contains($0.0) } + extra
        }
        if let s = since, let p = config.sinceParam {
            // Exclusive parameters get one less, so records sharing the
            // boundary stamp come again rather than never (sync down lowers
            // `since` itself for an overlap). A date-time goes back as the
            // server wrote it: one less would mean rewriting it in a format
            // the server may not read.
            let back: Int64 = strictlyPast ? (config.sinceExclusive ? 0 : -1) : (config.sinceExclusive ? 1 : 0)
            params.append((p, s.text ?? String(max(0, s.ms - back))))
        }
        if let n = next, case .cursor(_, let param) = config.paging, let t = SoupTransaction.keyText(n) {
            params.append((param, t))
        }
        return config.url + (params.isEmpty ? "" : (config.url.contains("?") ? "&" : "?") + URLText.query(params))
    }

    var sinceOverlapMs: Int64 { config.sinceOverlapMs }

    /// How many records a sync down from `since` will bring past it (a
    /// date-time `since` with an inclusive parameter: and those at it), when
    /// the target counts with HEAD; nil when the server does not say. A
    /// server that refuses the credentials, cannot be reached or keeps
    /// failing fails the sync here as the first page would, with no second try.
    func count(since position: FeedPosition?) throws -> Int? {
        let since = try FeedPosition.stamp(of: position)
        // Records past the position only: those read again were counted by
        // the runs that brought them.
        let url = listURL(since: since, cursor: nil, strictlyPast: true)
        let r = try send(HTTPRequest(method: "HEAD", url: url))
        if RetryingSender.isTransient(r) { throw TureenError(.http, "HEAD \(url): \(r.summary)") }
        guard r.isSuccess else { return nil }
        return config.totalHeaders.lazy.compactMap { r.header($0).flatMap { Int($0) } }.first
    }

    private var isCursorPaging: Bool {
        if case .cursor = config.paging { return true }
        return false
    }

    func get(id: String) throws -> JSONObject? {
        let url = recordURL(id)
        return try record(from: try send(HTTPRequest(method: "GET", url: url)), url: url)
    }

    /// A server that names records itself (POST creates) has nothing to
    /// find under an id this store chose.
    func lookUp(id: String) throws -> ServerRecord {
        guard config.createMethod == "PUT" else { return .none }
        guard let filter = config.idFilterParam, config.sinceParam != nil, config.tombstone != nil else {
            return try get(id: id).map { .live($0) } ?? .none
        }
        let url = listURL(since: Stamp(ms: 0), cursor: nil, overriding: [(filter, id)])
        let found = try page(from: try send(HTTPRequest(method: "GET", url: url)), url: url).records.first {
            $0[config.idField].flatMap(SoupTransaction.keyText)?.hasSameBytes(as: id) == true
        }
        guard let r = found else { return .none }
        return isTombstone(r) ? .deleted : .live(r)
    }

    /// The record in the server's answer to a GET of `url`; nil when the
    /// server has none (or only its tombstone).
    func record(from r: HTTPResponse, url: String) throws -> JSONObject? {
        if r.status == 404 || r.status == 410 { return nil }
        guard r.isSuccess else { throw TureenError(.http, "GET \(url): \(r.summary)", httpStatus: r.status) }
        guard let record = try r.json().at(config.recordPath)?.objectValue, !isTombstone(record) else { return nil }
        return record
    }

    func version(of base: JSONObject) -> String? {
        switch config.concurrency {
        case .none: return nil
        case .ifMatch: return base[config.modifiedField].flatMap(SoupTransaction.keyText)
        case .versionField(let f): return base[f].flatMap(SoupTransaction.keyText)
        }
    }

    func isTombstone(_ record: JSONObject) -> Bool {
        guard let t = config.tombstone else { return false }
        return record[t.field] == t.value
    }

    func recordURL(_ id: String) -> String { "\(config.url)/\(URLText.segment(id))" }

    /// One change as a request whose body is still a JSON value: a batch
    /// embeds it as it is, a single request serialises it.
    struct Planned {
        var method: String
        var url: String
        var headers: [(String, String)]
        var body: JSON?
    }

    /// The request that carries one change.
    func request(for c: Change) -> HTTPRequest {
        let p = plan(c)
        return HTTPRequest(method: p.method, url: p.url, headers: p.headers, body: p.body.map { Array($0.text.utf8) })
    }

    func pauseBeforeResend(attempt: Int) throws -> Bool {
        try sender.pauseBeforeResend(attempt: attempt)
    }

    func plan(_ c: Change) -> Planned {
        var headers: [(String, String)] = []
        var body: JSONObject? = c.record
        var method: String
        var url = recordURL(c.id)
        switch c.kind {
        case .create:
            method = config.createMethod
            if method == "POST" { url = config.url }
            if config.createIfNoneMatch && method == "PUT" { headers.append(("If-None-Match", "*")) }
        case .update:
            method = c.partial ? (config.partialMethod ?? config.updateMethod) : config.updateMethod
        case .delete:
            method = "DELETE"
            body = nil
        }
        if let v = c.ifMatch, c.kind != .create {
            switch config.concurrency {
            case .none: break
            case .ifMatch(let format): headers.append(("If-Match", format.replacingFirst("{}", with: v)))
            case .versionField(let f):
                if body != nil { body?[f] = Int64(v).map { .int($0) } ?? .string(v) } else { url += "?\(URLText.component(f))=\(URLText.component(v))" }
            }
        }
        return Planned(method: method, url: url, headers: headers, body: body.map { JSON.object($0).wrapped(in: config.recordPath) })
    }

    /// What a status and body mean for one change. `body` is nil when the
    /// answer was not JSON. A success counts only when its answer can be
    /// read: the record (with its id) at recordPath, or a 204 with no body;
    /// anything else may be a truncated or foreign answer, and marking the
    /// change clean then could lose it.
    func outcome(_ c: Change, status: Int, body: JSON?, summary: String) -> PushOutcome {
        switch status {
        case 204 where body == nil || body == .null:
            return .applied(nil)
        case 200..<300:
            guard let record = body?.at(config.recordPath)?.objectValue, names(record, c) else {
                return .rejected(TureenError(.http, "\(verb(c)) '\(c.id)': the server answered HTTP \(status) without the record, so the change is not confirmed and stays local", httpStatus: status))
            }
            return .applied(record)
        case 409, 412:
            if let path = config.conflictRecordPath, let current = body?.at(path)?.objectValue {
                // Kinto names a deleted record by its tombstone: the server has none.
                return .conflict(isTombstone(current) ? nil : current, known: true)
            }
            return .conflict(nil, known: false)
        case 404 where c.kind != .create, 410 where c.kind != .create:
            return .notFound
        default:
            return .rejected(TureenError(.http, "\(verb(c)) '\(c.id)': \(summary)", httpStatus: status))
        }
    }

    /// Whether an answer is about this change's record: the same id, or for
    /// a POST create (the server names it) any id.
    private func names(_ record: JSONObject, _ c: Change) -> Bool {
        guard let id = record[config.idField].flatMap(SoupTransaction.keyText) else { return false }
        return id == c.id || (c.kind == .create && config.createMethod == "POST")
    }

    private func verb(_ c: Change) -> String {
        switch c.kind { case .create: return "create"; case .update: return "update"; case .delete: return "delete" }
    }

    func push(_ changes: [Change]) throws -> [PushOutcome] {
        guard changes.count > 1 else { return try changes.map(pushOne) }
        return try config.batchFormat.push(changes, over: self)
    }

    /// Sends one change in a request of its own, with retries.
    func pushOne(_ c: Change) throws -> PushOutcome {
        var req = request(for: c)
        req.resendable = false  // see ChangePusher.push
        let r = try send(req)
        return outcome(c, status: r.status, body: try? r.json(), summary: r.summary)
    }
}

extension String {
    /// The first occurrence of `target` replaced (no Foundation here).
    func replacingFirst(_ target: String, with replacement: String) -> String {
        let parts = split(separator: target, maxSplits: 1, omittingEmptySubsequences: false)
        return parts.count == 2 ? parts[0] + replacement + parts[1] : self
    }

    /// Every occurrence of `target` replaced.
    func replacingAll(_ target: String, with replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
