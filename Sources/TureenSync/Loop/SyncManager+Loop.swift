import TureenStore
import TureenCore

/// The store handle's one sync loop.
extension SyncManager {
    public func startLoop(_ config: SyncLoopConfig) throws {
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

    /// $fh.sync's forceSync / doSync: with a loop, makes the sync (nil:
    /// every sync of the loop) due now; without one, runs it here, once.
    public func forceLoop(_ idOrName: String?) throws {
        guard let l = loopLock.withLock({ loop }) else { return try runCycle(idOrName) }
        try l.force(try idOrName.map { try load($0).id })
    }

    /// One cycle on the calling thread (RhoConnect's syncAll): the sync, or
    /// every sync of the store in the loop's default order, each run as
    /// tureen_resync runs it. A run that fails does not keep the others from
    /// running; the first failure is thrown once all have run. A cancelled
    /// run ends the cycle: the caller (or close) asked it to stop.
    private func runCycle(_ idOrName: String?) throws {
        if let n = idOrName {
            if let e = try run(try load(n), incremental: true, progress: nil).error { throw e }
            return
        }
        let syncs = SyncLoopConfig().inCycleOrder(try allStates())
        var failures: [(SyncState, TureenError)] = []
        for s in syncs {
            let current: SyncState
            do {
                current = try load(String(s.id))
            } catch let e as TureenError {
                // One deleted since the list was read is not one of the syncs any more.
                if e.code != .notFound { failures.append((s, e)) }
                continue
            }
            let failure: TureenError?
            do {
                failure = try run(current, incremental: true, progress: nil).error
            } catch let e as TureenError {
                failure = e
            }
            guard let e = failure else { continue }
            // A cancel (the caller's, or close) ends the cycle, and is what it reports.
            if e.code == .cancelled {
                failures = [(s, e)]
                break
            }
            failures.append((s, e))
        }
        guard let (s, e) = failures.first else { return }
        let more = failures.count > 1 ? " (and \(failures.count - 1) more of \(syncs.count) syncs failed)" : ""
        let name = s.name.map { " ('\($0)')" } ?? ""
        throw TureenError(e.code, "sync \(s.id)\(name): \(e.message)\(more)", retryAt: e.retryAt, httpStatus: e.httpStatus)
    }

    public func loopStatus() throws -> String {
        guard let l = loopLock.withLock({ loop }) else {
            return JSON.object(JSONObject([("running", .bool(false)), ("offline", .bool(isOffline))])).text
        }
        return try l.status()
    }
}
