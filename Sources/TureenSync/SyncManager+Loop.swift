import TureenStore

/// The store handle's one sync loop.
extension SyncManager {
    public func startLoop(config text: String?) throws {
        let config = try SyncLoopConfig.parse(text)
        try loopLock.withLock {
            if loop != nil { throw TureenError.misuse("the sync loop of this store handle is running; stop it first") }
            let l = SyncLoop(manager: self, config: config)
            try l.start()
            loop = l
        }
    }

    /// Stops the loop, waiting for a run in flight to stop at a safe point.
    /// False when no loop was running.
    @discardableResult
    public func stopLoop() -> Bool {
        guard let l = loopLock.withLock({ () -> SyncLoop? in defer { loop = nil }; return loop }) else { return false }
        l.stop()
        return true
    }

    public func forceLoop(_ idOrName: String?) throws {
        guard let l = loopLock.withLock({ loop }) else { throw TureenError.misuse("no sync loop is running on this store handle") }
        try l.force(try idOrName.map { try load($0).id })
    }

    public func loopStatus() throws -> String {
        guard let l = loopLock.withLock({ loop }) else {
            return JSON.object(JSONObject([("running", .bool(false)), ("offline", .bool(isOffline))])).text
        }
        return try l.status()
    }
}
