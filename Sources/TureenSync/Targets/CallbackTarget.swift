import TureenStore
import TureenCore

/// A host's custom target: four functions taking a JSON request and giving a
/// status and a JSON response. The C layer wraps the host's function
/// pointers in these closures; `release` runs when the last sync using the
/// target lets go of it, which is when the host may free its context.
public final class HostTarget: @unchecked Sendable {
    // Unchecked: immutable; the header tells the host its functions run on sync threads.
    public typealias Call = (String) -> (status: Int32, response: String?)
    let fetch: Call
    let create: Call?
    let update: Call?
    let remove: Call?
    private let release: () -> Void

    public init(fetch: @escaping Call, create: Call?, update: Call?, remove: Call?, release: @escaping () -> Void) {
        self.fetch = fetch
        self.create = create
        self.update = update
        self.remove = remove
        self.release = release
    }

    deinit { release() }
}

extension SyncManager {
    /// Registers as one of the calls close waits for (`serverCalls`): a
    /// registration that looked the handle up just before close would
    /// otherwise add its target after close released the others, and the
    /// host's free_ctx would run after close returned. Once close has begun
    /// it is refused before the target is made, so free_ctx is not called.
    public func registerTarget(_ name: String, _ target: @autoclosure () -> HostTarget) throws {
        try serverCalls.run { try callbacks.register(name, kind: "callback target", target) }
    }

    public func unregisterTarget(_ name: String) throws {
        try serverCalls.run { try callbacks.unregister(name, what: "callback target") }
    }
}

/// SyncTarget over a HostTarget.
final class CallbackTarget: SyncTarget {
    let host: HostTarget
    let idField: String
    let modifiedField: String
    let cancel: CancelFlag
    private(set) var requestCount = 0
    var fetchesOnAnyThread: Bool { false }
    func abandon() {}  // host calls run on the sync's thread: none is left running
    /// Retries of the host's TUREEN_E_NETWORK; fewer in the sync loop's
    /// runs (RetryingSender says why).
    var maxRetries = 5

    init(_ host: HostTarget, idField: String, modifiedField: String, cancel: CancelFlag) {
        self.host = host
        self.idField = idField
        self.modifiedField = modifiedField
        self.cancel = cancel
    }

    var sortedByModification: Bool { false }
    var batchSize: Int { 1 }
    var comparesBase: Bool { true }

    /// Calls the host, retrying TUREEN_E_NETWORK with backoff.
    private func call(_ fn: HostTarget.Call?, _ what: String, _ request: JSON) throws -> (TureenCode?, JSON) {
        guard let fn = fn else { throw TureenError.invalid("the callback target has no \(what) function") }
        var attempt = 0
        while true {
            try cancel.check()
            requestCount += 1
            let (status, text) = fn(request.text)
            let body = (try? text.map { try JSONParser.parse($0) }) ?? .null
            if status == 0 { return (nil, body) }
            let code = TureenCode(rawValue: status) ?? .internal
            if code == .network && attempt < maxRetries {
                try cancel.sleep(ms: Int.random(in: 100...(200 << attempt)))
                attempt += 1
                continue
            }
            return (code, body)
        }
    }

    private func message(_ body: JSON, _ code: TureenCode, _ what: String) -> String {
        body["error"]?.stringValue ?? "the host's \(what) function returned status \(code.rawValue)"
    }

    func fetch(since: FeedPosition?, next: JSON?) throws -> FetchPage {
        let position: JSON
        switch since {
        case nil: position = .null
        case .stamp(let s)?: position = s.text.map { .string($0) } ?? .int(s.ms)
        case .sequence(let s)?: position = .string(s)
        }
        let req = JSON.object(JSONObject([("since", position), ("cursor", next ?? .null)]))
        let (code, body) = try call(host.fetch, "fetch", req)
        if let code = code { throw TureenError(code, message(body, code, "fetch")) }
        guard let list = body["records"]?.arrayValue else {
            throw TureenError.invalid("the host's fetch response has no \"records\" array")
        }
        let records = try list.map { v -> JSONObject in
            guard let o = v.objectValue else { throw TureenError.invalid("the host's fetch returned a record that is not an object") }
            return o
        }
        let cursor = body["cursor"].flatMap { $0 == .null ? nil : $0 }
        return FetchPage(records: records, next: cursor, total: body["total"]?.int64Value.map { Int($0) })
    }

    func push(_ changes: [Change]) throws -> [PushOutcome] {
        try changes.map { c in
            let fn: HostTarget.Call?
            var req = JSONObject()
            let what: String
            switch c.kind {
            case .create: fn = host.create; what = "create"; req["record"] = .object(c.record)
            case .update: fn = host.update; what = "update"; req["record"] = .object(c.record)
            case .delete: fn = host.remove; what = "remove"; req["id"] = .string(c.id)
            }
            req["ifMatch"] = c.ifMatch.map { .string($0) } ?? .null
            if c.kind != .create { req["base"] = c.base.map { .object($0) } ?? .null }
            let (code, body) = try call(fn, what, .object(req))
            switch code {
            case nil: return .applied(body["record"]?.objectValue)
            case .conflict?: return .conflict(body["record"]?.objectValue, known: true)
            case .notFound?: return .notFound
            case let other?: return .rejected(TureenError(other, "\(what) '\(c.id)': \(message(body, other, what))"))
            }
        }
    }

    func get(id: String) throws -> JSONObject? { nil }

    func version(of base: JSONObject) -> String? { base[modifiedField].flatMap(SoupTransaction.keyText) }

    func isTombstone(_ record: JSONObject) -> Bool { record["deleted"] == .bool(true) }
}
