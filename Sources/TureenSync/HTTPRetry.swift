import Glibc
import TureenStore

/// A flag another thread raises to stop a sync between requests.
public final class CancelFlag: @unchecked Sendable {
    private let lock = Lock()
    private var raised = false
    /// Raising the parent raises this one too (not the other way round).
    private let parent: CancelFlag?

    public init(parent: CancelFlag? = nil) { self.parent = parent }

    public var isRaised: Bool { lock.withLock { raised } || (parent?.isRaised ?? false) }
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

/// Sends requests with retries: network errors, 5xx and 429 are tried again
/// after an exponential delay with jitter (so many clients recovering
/// from one outage do not return in step), or after the server's
/// Retry-After when it asks for longer. A Backoff header (Kinto's "slow
/// down") delays every later request of this sender by that many seconds.
final class RetryingSender {
    let client: HTTPClient
    let maxRetries: Int
    let cancel: CancelFlag
    let baseDelayMs = 250
    let maxDelayMs = 30_000
    /// The longest wait a server may impose, so a bad header cannot hang a sync.
    let longestWaitMs = 300_000
    private var notBeforeMs: Int64 = 0
    /// Requests sent over the wire, retries included (benchmarks report it).
    /// Locked: sync down reads it while the next page downloads.
    var requestCount: Int { countLock.withLock { sent } }
    private var sent = 0
    private let countLock = Lock()

    init(client: HTTPClient, maxRetries: Int, cancel: CancelFlag) {
        self.client = client
        self.maxRetries = maxRetries
        self.cancel = cancel
        client.isCancelled = { cancel.isRaised }
    }

    func send(_ request: HTTPRequest) throws -> HTTPResponse {
        var attempt = 0
        while true {
            let wait = notBeforeMs - Clock.nowMs()
            if wait > 0 { try cancel.sleep(ms: Int(wait)) }
            try cancel.check()
            countLock.withLock { sent += 1 }
            let response: HTTPResponse
            do {
                response = try client.send(request)
            } catch let e as TureenError where e.code == .network && attempt < maxRetries {
                try cancel.sleep(ms: delay(attempt))
                attempt += 1
                continue
            }
            if let b = response.header("backoff").flatMap({ Int($0) }), b > 0 {
                notBeforeMs = Clock.nowMs() + Int64(waitMs(seconds: b))
            }
            let transient = response.status >= 500 || response.status == 429
            if transient && attempt < maxRetries {
                let asked = response.header("retry-after").flatMap { Int($0) }.map(waitMs(seconds:)) ?? 0
                try cancel.sleep(ms: max(asked, delay(attempt)))
                attempt += 1
                continue
            }
            return response
        }
    }

    /// A server's wait in seconds as milliseconds, capped before multiplying:
    /// the header is the server's text, and any number must not trap.
    private func waitMs(seconds: Int) -> Int {
        max(0, min(seconds, longestWaitMs / 1000)) * 1000
    }

    private func delay(_ attempt: Int) -> Int {
        let cap = min(maxDelayMs, baseDelayMs << min(attempt, 16))
        return Int.random(in: cap / 2...cap)
    }
}
