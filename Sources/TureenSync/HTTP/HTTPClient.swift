import CCurl
import Glibc
import TureenStore
import TureenCore

/// One HTTP request. Header names are sent as given.
public struct HTTPRequest {
    public var method: String
    public var url: String
    public var headers: [(String, String)] = []
    public var body: [UInt8]?
    /// A body too large to hold, read as it is sent (blob uploads).
    var upload: BodySource?
    /// Where a successful (2xx) response's body goes as it arrives, instead
    /// of memory, with the most bytes it may have (blob downloads). An
    /// attempt after one that broke off asks for the rest with a Range.
    var download: (sink: BodySink, limit: Int64)?
    /// False for a write that must not be sent again as it is once it may
    /// have reached the server (sync up's; ChangePusher.push says why):
    /// neither RetryingSender nor libcurl repeats it then.
    var resendable = true

    public init(method: String, url: String, headers: [(String, String)] = [], body: [UInt8]? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }
}

/// A response: status, headers (names lowercased) and the body bytes.
public struct HTTPResponse {
    public var status: Int
    public var headers: [(String, String)]
    public var body: [UInt8]
    /// The settings the request went with: `summary` keeps their
    /// credentials out. Only an error asks for them, so they are worked out
    /// there, not for every response.
    var sentWith: HTTPSettings?

    public func header(_ name: String) -> String? {
        let n = name.lowercased()
        return headers.first(where: { $0.0 == n })?.1
    }

    public var isSuccess: Bool { status >= 200 && status < 300 }

    /// The body as JSON; an empty body is null.
    public func json() throws -> JSON {
        if body.isEmpty { return .null }
        return try body.withUnsafeBufferPointer { try JSONParser.parse(bytes: $0) }
    }

    /// `json()`, and where each element of the array at `path` lies in
    /// `body` (see `JSONParser.parse(bytes:elementsAt:)`): nil for an
    /// element whose text needs rewriting (`JSONParser.Element`).
    func json(elementsAt path: [String]) throws -> (JSON, [Range<Int>?]?) {
        if body.isEmpty { return (.null, nil) }
        return try body.withUnsafeBufferPointer { b in
            let (v, elements) = try JSONParser.parse(bytes: b, elementsAt: path)
            let start = b.baseAddress!  // not empty
            return (v, elements?.map { e in
                e.needsRewriting ? nil : e.text.baseAddress.map { ($0 - start)..<($0 - start + e.text.count) }
            })
        }
    }

    /// A short description for error messages: status and the server's message.
    public var summary: String {
        let secrets = sentWith.map(Redaction.secrets) ?? []
        var text = "HTTP \(status)"
        if let j = try? json(), let m = j["message"]?.stringValue ?? j["error"]?.stringValue {
            text += ": \(Redaction.scrub(m, secrets))"
        } else if !body.isEmpty {
            // Scrubbed before it is cut: a secret cut in two would keep its first half.
            text += ": " + String(Redaction.scrub(String(decoding: body.prefix(64 << 10), as: UTF8.self), secrets).prefix(200))
        }
        return text
    }
}

/// Connection settings shared by every request of a target.
public struct HTTPSettings {
    public var timeoutMs: Int = 30_000
    public var verifyTLS: Bool = true
    public var user: String?
    public var password: String?
    public var headers: [(String, String)] = []
    /// The most bytes one response may hold, headers and decoded body
    /// together: a server cannot make the host allocate without bound (a
    /// gzip bomb, an endless chunked body) — the request fails instead.
    public var maxResponseBytes = 64 << 20
}

/// A libcurl easy handle, reused for every request of one sync so that
/// connections (and TLS sessions) are kept alive between pages and batches.
/// Not thread-safe: one sync, one client.
public final class HTTPClient {
    private let handle: UnsafeMutableRawPointer
    /// Read by every request; credentials change when a session refreshes.
    var settings: HTTPSettings {
        get { settingsLock.withLock { current } }
        set { settingsLock.withLock { current = newValue } }
    }
    private var current: HTTPSettings
    private let settingsLock = Lock()
    /// Polled by libcurl during transfers; true aborts the request.
    var isCancelled: () -> Bool = { false }
    /// Whether the last request failed before a connection existed (the
    /// host not resolved, the connection refused): no byte of it reached
    /// the server, so a write it carried is known not to have happened.
    private(set) var lastNeverConnected = false

    public init(_ settings: HTTPSettings) throws {
        guard HTTPRuntime.initialised, let h = curl_easy_init() else {
            throw TureenError(.internal, "libcurl could not be initialised")
        }
        handle = h
        current = settings
    }

    deinit { curl_easy_cleanup(handle) }

    /// Sends one request. Transport failures are TUREEN_E_NETWORK, a
    /// cancellation TUREEN_E_CANCELLED; any HTTP status is a response.
    public func send(_ request: HTTPRequest) throws -> HTTPResponse {
        let h = handle
        let settings = self.settings  // one snapshot per request
        // Options from an earlier request must not leak into this one; reset
        // keeps the connection cache.
        curl_easy_reset(h)
        lastNeverConnected = false
        let sink = ResponseSink(isCancelled, limit: settings.maxResponseBytes)
        sink.handle = h
        let box = Unmanaged.passRetained(sink)
        defer { box.release() }
        var headerList: UnsafeMutablePointer<curl_slist>?
        defer { curl_slist_free_all(headerList) }
        var all = settings.headers + request.headers
        if request.body != nil || request.upload != nil, !all.contains(where: { $0.0.lowercased() == "content-type" }) {
            all.append(("Content-Type", "application/json"))
        }
        all.append(("Accept", request.download != nil ? "*/*" : "application/json"))
        all.append(("Expect", ""))  // no 100-continue round trip for large bodies
        for (k, v) in all {
            // Some values come from servers (an If-Match built from a stamp a
            // server returned): a line break there would add headers of its own.
            guard k.utf8.allSatisfy(HeaderText.isTokenByte), v.utf8.allSatisfy(HeaderText.isValueByte) else {
                throw TureenError(.http, "\(request.method) \(request.url): header '\(HeaderText.printable(k))' would carry a control character (from the target or a server's data); the request was not sent")
            }
            headerList = curl_slist_append(headerList, "\(k): \(v)")
        }

        var rc = tureen_curl_set_string(h, CURLOPT_URL, request.url)
        // libcurl refuses a URL past 8,000,000 bytes: one made so long by the
        // caller's data (a record id, query parameters) is bad input, not a
        // fault of this library. The URL is not shown: it is that long.
        if rc == CURLE_BAD_FUNCTION_ARGUMENT {
            throw TureenError.invalid("\(request.method) of a URL of \(request.url.utf8.count) bytes: longer than libcurl takes (8000000 bytes)")
        }
        func set(_ r: CURLcode) { if rc == CURLE_OK { rc = r } }
        set(tureen_curl_set_list(h, CURLOPT_HTTPHEADER, headerList))
        set(tureen_curl_set_long(h, CURLOPT_NOSIGNAL, 1))
        // Name lookup, TCP and TLS together; libcurl ends them past it.
        let connectMs = max(min(settings.timeoutMs, 10_000), 1)
        if request.upload != nil || request.download != nil {
            // A blob may take longer than any fixed limit on a slow link:
            // the limit is on time without progress instead (under 1 KiB
            // moved in timeout_ms), so a stalled or trickling server still
            // ends the transfer. Checked here, in the progress callback, not
            // with CURLOPT_LOW_SPEED_*: libcurl judges those by its speed
            // averaged over the last 5 s, so a server that stalled after a
            // burst was let go about 6 s past timeout_ms, not within it.
            sink.stall = StallCheck(limitMs: max(settings.timeoutMs, 1), connectMs: connectMs)
        } else {
            set(tureen_curl_set_long(h, CURLOPT_TIMEOUT_MS, settings.timeoutMs))
        }
        set(tureen_curl_set_long(h, CURLOPT_CONNECTTIMEOUT_MS, connectMs))
        set(tureen_curl_set_long(h, CURLOPT_SSL_VERIFYPEER, settings.verifyTLS ? 1 : 0))
        set(tureen_curl_set_long(h, CURLOPT_SSL_VERIFYHOST, settings.verifyTLS ? 2 : 0))
        // A blob is fetched as its bytes: a Range counts the bytes the
        // server sends, and a gzip form's offsets are not the blob's, so a
        // download resumed from a decoded count would be refused every run.
        set(tureen_curl_set_string(h, CURLOPT_ACCEPT_ENCODING, request.download != nil ? "identity" : ""))
        set(tureen_curl_set_long(h, CURLOPT_PROTOCOLS, Int(CURLPROTO_HTTP | CURLPROTO_HTTPS)))
        if let u = settings.user {
            set(tureen_curl_set_long(h, CURLOPT_HTTPAUTH, 1))  // CURLAUTH_BASIC, a macro Swift cannot import
            set(tureen_curl_set_string(h, CURLOPT_USERNAME, u))
            set(tureen_curl_set_string(h, CURLOPT_PASSWORD, settings.password ?? ""))
        }
        switch request.method {
        case "GET": set(tureen_curl_set_long(h, CURLOPT_HTTPGET, 1))
        case "HEAD": set(tureen_curl_set_long(h, CURLOPT_NOBODY, 1))
        default: set(tureen_curl_set_string(h, CURLOPT_CUSTOMREQUEST, request.method))
        }
        // libcurl repeats a request on its own, unasked, when a reused
        // connection closes before any answer: once more on a fresh one,
        // though the server may have applied it. A write that must not be
        // repeated blindly gives its body through the read callback, with no
        // way to rewind it, so libcurl fails the request instead
        // (CURLE_SEND_FAIL_REWIND) and the caller decides; one without a
        // body (a DELETE) goes over a connection of its own.
        let upload = request.upload ?? (request.resendable ? nil : request.body.map(BytesBody.init))
        if !request.resendable && upload == nil { set(tureen_curl_set_long(h, CURLOPT_FRESH_CONNECT, 1)) }
        if let body = request.body, upload == nil {
            set(tureen_curl_set_offset(h, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count)))
            // COPYPOSTFIELDS copies, so the buffer need not outlive this call;
            // an empty body still needs a valid pointer.
            var bytes = body.isEmpty ? [UInt8(0)] : body
            bytes.withUnsafeMutableBytes { b in
                set(tureen_curl_set_pointer(h, CURLOPT_COPYPOSTFIELDS, b.baseAddress))
            }
        }
        let user = box.toOpaque()
        if let up = upload {
            // Each attempt (a retry too) sends the body from its start.
            try up.restart()
            sink.source = up
            // POST's body handling for every method: CUSTOMREQUEST names
            // the verb (a PUT of a blob), the read callback gives the bytes.
            set(tureen_curl_set_long(h, CURLOPT_POST, 1))
            set(tureen_curl_set_offset(h, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(up.length)))
            set(tureen_curl_set_data_fn(h, CURLOPT_READFUNCTION, { ptr, size, n, user in
                guard let user = user, let ptr = ptr else { return Int(CURL_READFUNC_ABORT) }
                let sink = Unmanaged<ResponseSink>.fromOpaque(user).takeUnretainedValue()
                do {
                    return try sink.source?.read(into: UnsafeMutableRawBufferPointer(start: ptr, count: size * n)) ?? 0
                } catch {
                    sink.failure = error
                    return Int(CURL_READFUNC_ABORT)
                }
            }))
            set(tureen_curl_set_pointer(h, CURLOPT_READDATA, user))
        }
        if let down = request.download {
            let kept = down.sink.kept
            if kept > 0 {
                headerList = curl_slist_append(headerList, "Range: bytes=\(kept)-")
                set(tureen_curl_set_list(h, CURLOPT_HTTPHEADER, headerList))
            } else {
                try down.sink.restart()
            }
            sink.stream = down
            sink.resumedFrom = kept
        }
        set(tureen_curl_set_data_fn(h, CURLOPT_WRITEFUNCTION, { ptr, size, n, user in
            guard let user = user, let ptr = ptr else { return 0 }
            let sink = Unmanaged<ResponseSink>.fromOpaque(user).takeUnretainedValue()
            let bytes = UnsafeRawBufferPointer(start: ptr, count: size * n)
            let streams = sink.streams
            if sink.failure != nil { return 0 }  // a resumed body that does not fit
            if streams { return sink.pass(bytes) ? size * n : 0 }
            guard sink.admit(bytes.count) else { return 0 }  // libcurl ends the transfer
            sink.reserveAnnounced()
            sink.body.append(contentsOf: bytes)
            return size * n
        }))
        set(tureen_curl_set_pointer(h, CURLOPT_WRITEDATA, user))
        set(tureen_curl_set_data_fn(h, CURLOPT_HEADERFUNCTION, { ptr, size, n, user in
            guard let user = user, let ptr = ptr else { return 0 }
            let sink = Unmanaged<ResponseSink>.fromOpaque(user).takeUnretainedValue()
            guard sink.admit(size * n) else { return 0 }
            sink.headerLine(UnsafeRawBufferPointer(start: ptr, count: size * n))
            return size * n
        }))
        set(tureen_curl_set_pointer(h, CURLOPT_HEADERDATA, user))
        set(tureen_curl_set_long(h, CURLOPT_NOPROGRESS, 0))
        set(tureen_curl_set_progress_fn(h, { user, _, dlnow, _, ulnow in
            guard let user = user else { return 0 }
            let sink = Unmanaged<ResponseSink>.fromOpaque(user).takeUnretainedValue()
            if sink.isCancelled() { return 1 }
            guard sink.stall != nil, let h = sink.handle else { return 0 }
            // 0 until the connection is set up (libcurl counts at least 1 µs).
            var connectedAfterUs: curl_off_t = 0
            _ = tureen_curl_get_offset(h, CURLINFO_PRETRANSFER_TIME_T, &connectedAfterUs)
            return sink.stall?.stalled(moved: Int64(dlnow) + Int64(ulnow), connectedAfterUs: Int64(connectedAfterUs)) == true ? 1 : 0
        }))
        set(tureen_curl_set_pointer(h, CURLOPT_XFERINFODATA, user))
        guard rc == CURLE_OK else {
            throw TureenError(.internal, "libcurl refused an option: \(String(cString: curl_easy_strerror(rc)))")
        }
        sink.stall?.start()
        let done = curl_easy_perform(h)
        if let e = sink.failure { throw e }
        if done == CURLE_OK { try Fault.point("http.answer_read", failing: .network) }
        if done == CURLE_ABORTED_BY_CALLBACK, let stall = sink.stall, stall.hasStalled, !sink.isCancelled() {
            // A network error, retried as libcurl's own timeouts are.
            throw TureenError(.network, "\(request.method) \(Log.url(request.url)): less than 1 KiB moved in \(stall.limitMs) ms (the target's timeout_ms); the transfer stalled")
        }
        if done == CURLE_ABORTED_BY_CALLBACK { throw TureenError(.cancelled, "the sync was cancelled") }
        if sink.overflowed, let d = request.download {
            throw TureenError(.http, "\(request.method) \(Log.url(request.url)): the server sent more than the \(d.limit) bytes expected; nothing of it was kept")
        }
        if sink.overflowed {
            throw TureenError(.http, "\(request.method) \(Log.url(request.url)): the response is larger than the target's max_response_bytes (\(settings.maxResponseBytes) bytes); nothing of it was used")
        }
        guard done == CURLE_OK else {
            lastNeverConnected = done == CURLE_COULDNT_CONNECT || done == CURLE_COULDNT_RESOLVE_HOST
                || done == CURLE_COULDNT_RESOLVE_PROXY
            // Log.url: a blob's URL may carry a signature in its query.
            throw TureenError(.network, "\(request.method) \(Log.url(request.url)): \(String(cString: curl_easy_strerror(done)))")
        }
        var status = 0
        _ = tureen_curl_get_long(h, CURLINFO_RESPONSE_CODE, &status)
        return HTTPResponse(status: status, headers: sink.headers, body: sink.body, sentWith: settings)
    }
}

/// A request body read as it is sent.
protocol BodySource: AnyObject {
    var length: Int64 { get }
    /// Goes back to the first byte (before each attempt).
    func restart() throws
    /// Fills `buffer` with the next bytes; 0 at the end.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int
}

/// A body in memory given through the read callback (HTTPRequest.resendable).
private final class BytesBody: BodySource {
    private let bytes: [UInt8]
    private var at = 0
    init(_ bytes: [UInt8]) { self.bytes = bytes }
    var length: Int64 { Int64(bytes.count) }
    func restart() { at = 0 }
    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        let n = min(buffer.count, bytes.count - at)
        guard n > 0 else { return 0 }
        bytes.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + at, byteCount: n) }
        at += n
        return n
    }
}

/// A response body taken as it arrives.
protocol BodySink: AnyObject {
    /// The bytes earlier attempts delivered that the sink can continue
    /// from (0: start afresh).
    var kept: Int64 { get }
    /// Forgets what an earlier attempt delivered.
    func restart() throws
    func write(_ bytes: UnsafeRawBufferPointer) throws
}

/// A blob transfer's limit on time without progress: it has stalled once
/// less than 1 KiB moved within `limitMs` of the connection being set up,
/// or of the last time 1 KiB more had moved. Setting the connection up
/// (name lookup, TCP, TLS) moves nothing a slow link could be judged by:
/// it has its own limit, `connectMs` (CURLOPT_CONNECTTIMEOUT_MS), so a
/// slow handshake is not taken for a stall, and the window starts when it
/// ends at the latest, should libcurl not say when it did. Judged at each
/// call of libcurl's progress callback, which comes at least once a second
/// while a transfer waits, so a stall ends the attempt within about a
/// second of `limitMs`.
struct StallCheck {
    let limitMs: Int
    let connectMs: Int
    private var startedNs: UInt64 = 0
    /// When the window began (nil while connecting).
    private var sinceNs: UInt64?
    private var movedThen: Int64 = 0
    private(set) var hasStalled = false

    init(limitMs: Int, connectMs: Int) {
        self.limitMs = limitMs
        self.connectMs = connectMs
    }

    /// Starts the attempt's clock (before libcurl starts it).
    mutating func start() {
        startedNs = Clock.monotonicNs()
        sinceNs = nil
        movedThen = 0
        hasStalled = false
    }

    /// Whether the transfer has stalled, given the bytes moved so far
    /// (downloaded and uploaded, this attempt) and how long after the
    /// start the connection was set up (libcurl's pretransfer time; 0
    /// while it is not).
    mutating func stalled(moved: Int64, connectedAfterUs: Int64) -> Bool {
        let now = Clock.monotonicNs()
        guard let since = sinceNs ?? windowStart(connectedAfterUs, now) else { return false }
        sinceNs = since
        if moved < movedThen {
            movedThen = moved  // libcurl counts afresh for a redirect's response
        }
        if moved - movedThen >= 1024 {
            movedThen = moved
            sinceNs = now
        } else if now &- since >= UInt64(limitMs) * 1_000_000 {
            hasStalled = true
        }
        return hasStalled
    }

    private func windowStart(_ connectedAfterUs: Int64, _ now: UInt64) -> UInt64? {
        if connectedAfterUs > 0 { return startedNs &+ UInt64(connectedAfterUs) &* 1000 }
        let connectLimit = startedNs &+ UInt64(connectMs) * 1_000_000
        return now >= connectLimit ? connectLimit : nil
    }
}

/// Collects one response; libcurl's callbacks reach it through an opaque pointer.
private final class ResponseSink {
    var body: [UInt8] = []
    /// A blob transfer's limit on time without progress (nil: the
    /// request's total time is limited instead, CURLOPT_TIMEOUT_MS).
    var stall: StallCheck?
    var source: BodySource?
    var stream: (sink: BodySink, limit: Int64)?
    var handle: UnsafeMutableRawPointer?
    /// An error of the source or the sink, which libcurl cannot carry.
    var failure: Error?
    private var streamed: Int64 = 0
    var headers: [(String, String)] = []
    let isCancelled: () -> Bool
    private let limit: Int
    private var received = 0
    private(set) var overflowed = false

    init(_ isCancelled: @escaping () -> Bool, limit: Int) {
        self.isCancelled = isCancelled
        self.limit = limit
    }

    /// True when this response's body goes to the stream: a success
    /// status; an error's body stays in memory to be reported. Decided at
    /// the body's first bytes (the status is known by then), not per piece.
    var streams: Bool {
        if let s = streamsDecided { return s }
        guard let s = stream, let h = handle else { return false }
        var status = 0
        _ = tureen_curl_get_long(h, CURLINFO_RESPONSE_CODE, &status)
        streamsDecided = status >= 200 && status < 300
        if streamsDecided == true && resumedFrom > 0 {
            do {
                try resume(status, s.sink)
            } catch {
                failure = error
                streamsDecided = false
            }
        }
        return streamsDecided ?? false
    }
    private var streamsDecided: Bool?
    /// The bytes the sink kept when this attempt asked for the rest.
    var resumedFrom: Int64 = 0

    /// A 206 must start where the Range asked (a server that sends another
    /// part would splice wrong bytes in); any other success is the whole
    /// body again, and the sink starts afresh.
    private func resume(_ status: Int, _ sink: BodySink) throws {
        if status == 206 {
            let range = headers.first(where: { $0.0 == "content-range" })?.1 ?? ""
            guard range.hasPrefix("bytes \(resumedFrom)-") else {
                throw TureenError(.http, "the server answered a request for the bytes from \(resumedFrom) on with the range '\(HeaderText.printable(String(range.prefix(80))))'; nothing of it was kept")
            }
            streamed = resumedFrom
        } else {
            try sink.restart()
        }
    }

    /// Hands bytes to the stream; false (ending the transfer) past its
    /// limit or when the stream fails.
    func pass(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let s = stream else { return false }
        streamed += Int64(bytes.count)
        if streamed > s.limit {
            overflowed = true
            return false
        }
        do {
            try s.sink.write(bytes)
            return true
        } catch {
            failure = error
            return false
        }
    }

    /// Makes room for the whole body at its first bytes when the server
    /// said how long it is: grown by doubling, a page of sync down ended in
    /// a buffer up to twice its size, after copies through each smaller one
    /// (bench/bulk_sync_bench.py's peak RSS). A compressed body's length is
    /// smaller than what it decodes to; the buffer then grows from there.
    func reserveAnnounced() {
        guard body.capacity == 0, let h = handle else { return }
        var n: curl_off_t = -1
        guard tureen_curl_get_offset(h, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &n) == CURLE_OK, n > 0, n <= limit else { return }
        body.reserveCapacity(Int(n))
    }

    /// Counts `n` more bytes of the response; false once past the limit.
    func admit(_ n: Int) -> Bool {
        received += n
        if received > limit { overflowed = true }
        return !overflowed
    }

    func headerLine(_ raw: UnsafeRawBufferPointer) {
        let line = String(decoding: raw, as: UTF8.self)
        if line.hasPrefix("HTTP/") {  // a new response (after a redirect or 100)
            // The request is on the wire and the server has answered it.
            do { try Fault.point("http.answer_arriving", failing: .network) } catch { failure = error }
            headers.removeAll()
            streamsDecided = nil
            return
        }
        if let field = HTTPResponse.field(line) { headers.append(field) }
    }
}

extension HTTPResponse {
    /// A header line as the server sent it, as a name (lowercased) and a
    /// trimmed value; nil for a line without a colon.
    static func field(_ line: String) -> (String, String)? {
        guard let colon = line.firstIndex(of: ":") else { return nil }
        let name = line[..<colon].lowercased()
        let value = line[line.index(after: colon)...].trimmingCharacters(in: " \t\r\n")
        return (name, value)
    }
}

extension Substring {
    func trimmingCharacters(in set: String) -> String {
        var s = self
        while let f = s.first, set.contains(f) { s.removeFirst() }
        while let l = s.last, set.contains(l) { s.removeLast() }
        return String(s)
    }
}

/// libcurl's process-wide initialisation, once, before any handle exists.
public enum HTTPRuntime {
    /// curl_global_init is not thread-safe before 7.84; a Swift global is
    /// initialised once, under a lock, on first use.
    public static let initialised: Bool = curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK
}
