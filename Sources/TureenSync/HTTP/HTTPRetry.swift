import Glibc
import TureenStore
import TureenCore

/// A flag another thread raises to stop a sync between requests.
public final class CancelFlag: @unchecked Sendable {
    // Unchecked: `raised` is touched only under `lock`; `parents` never change.
    private let lock = Lock()
    private var raised = false
    /// Raising a parent raises this one too (not the other way round).
    private let parents: [CancelFlag]

    public init(parent: CancelFlag? = nil, also other: CancelFlag? = nil) { parents = [parent, other].compactMap { $0 } }

    public var isRaised: Bool { lock.withLock { raised } || parents.contains { $0.isRaised } }
    public func raise() { lock.withLock { raised = true } }

    func check() throws {
        if isRaised { throw TureenError(.cancelled, "the sync was cancelled") }
    }

    /// Sleeps `ms`, waking early (with TUREEN_E_CANCELLED) when raised.
    func sleep(ms: Int) throws {
        var left = ms
        while left > 0 {
            try check()
            let step = min(left, 50)
            usleep(UInt32(step) * 1000)
            left -= step
        }
        try check()
    }
}

/// Pauses servers asked for with Kinto's Backoff header, by origin
/// (URLText.origin), kept by a store handle's sync manager so the next run
/// and the sync loop honour a pause an earlier run was told of.
public final class ServerPauses: @unchecked Sendable {
    // Unchecked: `until` is touched only under `lock`.
    private let lock = Lock()
    private var until: [String: Int64] = [:]

    /// When the server at `key` asked to be left alone until (0: no pause).
    func until(_ key: String) -> Int64 { lock.withLock { until[key] ?? 0 } }

    func set(_ key: String, until ms: Int64) {
        lock.withLock {
            if ms <= Clock.nowMs() { until[key] = nil } else { until[key] = max(until[key] ?? 0, ms) }
        }
    }
}

/// Sends requests with retries: network errors, 5xx (but 501), 429 and a
/// 409 that carries Retry-After (Kinto's "integrity constraint violated,
/// please retry" under concurrent writers) are tried again after an exponential
/// delay with jitter (so many clients recovering from one outage do not
/// return in step), or after the server's Retry-After when it asks for
/// longer. A Backoff header (Kinto's "slow down") delays every later request
/// to that server by that many seconds, also those of later runs on the
/// store handle (ServerPauses).
///
/// Network errors are retried `networkRetries` times (no more than
/// `maxRetries`): the sync loop's runs take fewer, because the loop itself
/// tries again, and a network that is gone must be reported at once.
///
/// A server may not hold the caller longer than `maxWaitMs` per wait: a
/// longer Retry-After, or a request due inside a longer Backoff, ends the
/// call at once with TUREEN_E_HTTP
/// and the time the server named (`TureenError.retryAt`), so a caller that
/// schedules syncs can come back then instead of blocking a thread now.
final class RetryingSender {
    let client: HTTPClient
    let maxRetries: Int
    let networkRetries: Int
    let maxWaitMs: Int
    let cancel: CancelFlag
    let baseDelayMs = 250
    let maxDelayMs = 30_000
    private var notBeforeMs: Int64 {
        get {
            if let (pauses, key) = pause { return pauses.until(key) }
            return ownPause
        }
        set {
            if let (pauses, key) = pause { pauses.set(key, until: newValue) } else { ownPause = newValue }
        }
    }
    private var ownPause: Int64 = 0
    /// Where a Backoff outlives this sender: the store's pauses, by server.
    private let pause: (ServerPauses, String)?
    /// Requests sent over the wire, retries included (benchmarks report it).
    /// Locked: sync down reads it while the next page downloads.
    var requestCount: Int { countLock.withLock { sent } }
    /// Requests that may have reached the server: all but those that found
    /// no connection (HTTPClient.lastNeverConnected).
    var mayHaveArrivedCount: Int { countLock.withLock { sent - neverConnected } }
    private var sent = 0
    private var neverConnected = 0
    private let countLock = Lock()

    init(client: HTTPClient, maxRetries: Int, networkRetries: Int? = nil, maxWaitMs: Int, cancel: CancelFlag,
         pause: (ServerPauses, String)? = nil) {
        self.client = client
        self.pause = pause
        self.maxRetries = maxRetries
        self.networkRetries = min(maxRetries, networkRetries ?? maxRetries)
        self.maxWaitMs = maxWaitMs
        self.cancel = cancel
        client.isCancelled = { cancel.isRaised }
    }

    /// Whether a response asks to be tried again. Not 501: the server
    /// lacks the method (HEAD, often), which asking again cannot change,
    /// and a caller that has another way to ask (RestBlobs' Range probe)
    /// should take it at once, not after max_retries delays.
    static func isTransient(_ r: HTTPResponse) -> Bool {
        (r.status >= 500 && r.status != 501) || r.status == 429 || (r.status == 409 && r.header("retry-after") != nil)
    }

    /// Whether a failure answer leaves open that the request was applied:
    /// a 500 can come after the server's commit, and a 502 or 504 from a
    /// gateway whose server may still be at work on it. (A 503, 429 or 409
    /// with Retry-After refuses the request before it is carried out.)
    static func mayHaveApplied(_ r: HTTPResponse) -> Bool {
        r.status == 500 || r.status == 502 || r.status == 504
    }

    /// Sends `request`, with the retries the type describes; a request not
    /// `resendable` is not sent again after a failure that may have
    /// reached the server: that failure is thrown marked `mayHaveApplied`.
    func send(_ request: HTTPRequest) throws -> HTTPResponse {
        var attempt = 0
        while true {
            let wait = notBeforeMs - Clock.nowMs()
            if wait > Int64(maxWaitMs) {
                throw TureenError(.http, "\(request.method) \(request.url): the server asked (Backoff) not to be contacted for another \((wait + 999) / 1000) s, longer than the target's max_wait_ms (\(maxWaitMs) ms); try again after that", retryAt: notBeforeMs)
            }
            if wait > 0 { try cancel.sleep(ms: Int(wait)) }
            try cancel.check()
            countLock.withLock { sent += 1 }
            let response: HTTPResponse
            let started = Clock.nowMs()
            do {
                response = try client.send(request)
            } catch let e as TureenError {
                if client.lastNeverConnected { countLock.withLock { neverConnected += 1 } }
                Log.write(.debug, .http, "\(request.method) \(Log.url(request.url)) failed after \(Clock.nowMs() - started) ms: \(e.code) (attempt \(attempt + 1))")
                if e.code == .network && !request.resendable && !client.lastNeverConnected {
                    var lost = e
                    lost.mayHaveApplied = true
                    throw lost
                }
                guard e.code == .network && attempt < networkRetries else { throw e }
                try cancel.sleep(ms: delay(attempt))
                attempt += 1
                continue
            }
            Log.write(.debug, .http, "\(request.method) \(Log.url(request.url)) -> \(response.status), \(response.body.count) bytes, \(Clock.nowMs() - started) ms")
            if let b = response.header("backoff").flatMap({ Int($0) }), b > 0 {
                // Remembered, not waited for here: this answer is good, and
                // the next request (of this run or a later one) waits or ends.
                notBeforeMs = Clock.nowMs() + Int64(min(b, Int(Int32.max))) * 1000
            }
            if !request.resendable && RetryingSender.mayHaveApplied(response) {
                var lost = TureenError(.http, "\(request.method) \(request.url): \(response.summary); it may have been applied", httpStatus: response.status)
                lost.mayHaveApplied = true
                throw lost
            }
            if RetryingSender.isTransient(response) && attempt < maxRetries {
                let asked = try response.header("retry-after").flatMap(RetryingSender.retryAfterSeconds)
                    .map { try allowedWaitMs(seconds: $0, header: "Retry-After", request) } ?? 0
                try cancel.sleep(ms: max(asked, delay(attempt)))
                attempt += 1
                continue
            }
            return response
        }
    }

    /// Retry-After's seconds: a number of them (one too large for an Int is
    /// as good as for ever), or an HTTP-date (seconds from now, 0 when
    /// past); nil for anything else, which is then not waited for.
    static func retryAfterSeconds(_ text: String) -> Int? {
        if !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) { return Int(text) ?? Int.max }
        guard let at = DateTimeText.httpDateEpochMs(text) else { return nil }
        return Int(max(0, (at - Clock.nowMs() + 999) / 1000))
    }

    /// A server's wait in seconds as milliseconds, when it is within
    /// `maxWaitMs`; otherwise the call ends. The header is the server's text:
    /// any number, however large, must neither trap nor hold the caller.
    private func allowedWaitMs(seconds: Int, header: String, _ request: HTTPRequest) throws -> Int {
        let s = max(0, seconds)
        guard s <= maxWaitMs / 1000 else {
            let until = Clock.nowMs().addingReportingOverflow(Int64(min(s, Int(Int32.max))) * 1000).partialValue
            throw TureenError(.http, "\(request.method) \(request.url): the server asked to wait \(s) s (\(header)), longer than the target's max_wait_ms (\(maxWaitMs) ms); try again after that", retryAt: until)
        }
        return s * 1000
    }

    /// Waits before a write whose answer may have been lost goes again in
    /// another form (ChangePusher): as long as this sender would have
    /// waited to send it again itself. False when `attempt` is past its
    /// network retries.
    func pauseBeforeResend(attempt: Int) throws -> Bool {
        guard attempt < networkRetries else { return false }
        try cancel.sleep(ms: delay(attempt))
        return true
    }

    private func delay(_ attempt: Int) -> Int {
        let cap = min(maxDelayMs, baseDelayMs << min(attempt, 16))
        return Int.random(in: cap / 2...cap)
    }
}
