import TureenStore

/// One execution of a sync: it owns the state while it runs, saves it with
/// every page or batch it commits, and reports progress.
final class SyncRun {
    let store: Store
    var state: SyncState
    let target: SyncTarget
    let cancel: CancelFlag
    let progress: ((String) -> Void)?

    init(store: Store, state: SyncState, target: SyncTarget, cancel: CancelFlag, progress: ((String) -> Void)?) {
        self.store = store
        self.state = state
        self.target = target
        self.cancel = cancel
        self.progress = progress
    }

    var soup: String { state.soupName }

    /// Saves the state on `c`, inside the caller's transaction.
    func saveState(_ c: Connection) throws {
        state.requests = target.requestCount
        let tx = try store.soupTransaction(c, SyncState.soup, keyPath: nil)
        state.id = try tx.save(state.object)
    }

    func report() {
        progress?(state.text)
    }

    /// Runs `body`, then ends the state DONE, or FAILED when records failed
    /// or conflict, or FAILED / STOPPED when the sync itself could not go on.
    /// The state is saved and reported in every case.
    func finish(_ body: () throws -> Void) -> SyncResult {
        state.status = .running
        state.startTime = Clock.nowMs()
        state.endTime = 0
        state.error = nil
        state.failedIds = []
        state.failedRecords = []
        state.conflictIds = []
        state.retryAt = nil
        state.synced = 0
        state.done = 0
        var failure: TureenError?
        do {
            try store.withWriteTransaction(origin: .sync) { c in try saveState(c) }
            report()
            try body()
            if state.failedCount > 0 || !state.conflictIds.isEmpty {
                let message = "\(state.failedCount) record(s) failed, \(state.conflictIds.count) in conflict; the others are synced"
                failure = TureenError(state.failedCount == 0 ? .conflict : .http, message)
            }
        } catch let e as TureenError {
            failure = e
        } catch {
            failure = TureenError(.internal, "\(error)")
        }
        state.status = failure == nil ? .done : (failure?.code == .cancelled ? .stopped : .failed)
        state.error = failure?.message
        state.retryAt = failure?.retryAt
        state.endTime = Clock.nowMs()
        Log.write(failure == nil ? .info : .warning, .sync, "sync \(state.id) (\(state.kind.rawValue), soup '\(state.soupName)') ended \(state.status.rawValue) after \(state.endTime - state.startTime) ms: \(state.synced) synced, \(state.failedCount) failed, \(state.conflictIds.count) in conflict\(failure.map { "; " + $0.message } ?? "")")
        do {
            try store.withWriteTransaction(origin: .sync) { c in try saveState(c) }
        } catch let e as TureenError {
            failure = failure ?? e
        } catch {}
        report()
        return SyncResult(state: state.text, error: failure)
    }
}

/// What a sync call returns: the final state, and the error it ended with.
public struct SyncResult {
    public let state: String
    public let error: TureenError?

    public init(state: String, error: TureenError?) {
        self.state = state
        self.error = error
    }
}
