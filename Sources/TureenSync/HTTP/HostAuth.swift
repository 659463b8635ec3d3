import TureenStore
import TureenCore

/// A host's credential refresher (a login session): asked for fresh
/// credentials when a server answers 401. The C layer wraps the host's
/// function in `refresh`; `release` runs when no target holds it any more.
public final class HostAuth: @unchecked Sendable {
    // Unchecked: immutable (`asking` is a lock); the header tells the host its refresh function runs on sync threads.
    public typealias Refresh = (String) -> (status: Int32, response: String?)
    let refresh: Refresh
    /// A sync up's parallel connections may meet a 401 together: the host's
    /// function is still called by one thread at a time.
    private let asking = Lock()
    private let release: () -> Void

    public init(refresh: @escaping Refresh, release: @escaping () -> Void) {
        self.refresh = refresh
        self.release = release
    }

    deinit { release() }

    /// Asks the host for credentials after `status`; returns the new "auth"
    /// object ({"bearer"} or {"user", "password"}).
    func credentials(name: String, target: JSON, status: Int) throws -> JSONObject {
        let request = JSON.object(JSONObject([("target", TargetSecrets.redact(target)), ("status", .int(Int64(status)))]))
        let (rc, text) = asking.withLock { refresh(request.text) }
        guard rc == 0 else {
            throw TureenError(.http, "HTTP \(status), and the credential refresher '\(name)' returned status \(rc)")
        }
        guard let t = text, let o = (try? JSONParser.parse(t))?.objectValue,
              o["bearer"]?.stringValue != nil || o["user"]?.stringValue != nil else {
            throw TureenError(.http, "HTTP \(status), and the credential refresher '\(name)' gave no {\"bearer\"} or {\"user\", \"password\"} object")
        }
        return o
    }
}

extension SyncManager {
    /// One of the calls close waits for, as `registerTarget` is.
    public func registerAuth(_ name: String, _ auth: @autoclosure () -> HostAuth) throws {
        try serverCalls.run { try auths.register(name, kind: "credential refresher", auth) }
    }

    public func unregisterAuth(_ name: String) throws {
        try serverCalls.run { try auths.unregister(name, what: "credential refresher") }
    }
}
