import TureenStore
import TureenCore

/// One execution of a sync: it owns the state while it runs, saves it with
/// every page or batch it commits, and reports progress.
final class SyncRun {
    let store: Store
    var state: SyncState
    let target: SyncTarget
    let cancel: CancelFlag
    let progress: ((String) -> Void)?
    let events: SyncEvents
    /// The record ids this run created, updated and deleted (on the device
    /// for a sync down, on the server for a sync up), for sync_complete;
    /// kept only while a listener wants that event.
    private(set) var outcome: [RecordOperation: [JSON]] = [:]
    private var collectsOutcome = false
    /// Whether this run of a sync down goes on after a stopped or failed
    /// one: its progress then carries on from the records already brought,
    /// instead of starting again at 0 (what a progress bar needs).
    private(set) var resuming = false
    /// Moves blobs for this run, made when the first one must move.
    var blobMover: BlobMover?

    init(store: Store, state: SyncState, target: SyncTarget, cancel: CancelFlag, progress: ((String) -> Void)?) {
        self.store = store
        self.state = state
        self.target = target
        self.cancel = cancel
        self.progress = progress
        self.events = SyncEvents(store: store)
    }

    var soup: String { state.soupName }

    /// Saves the state on `c`, inside the caller's transaction.
    func saveState(_ c: StoreTransaction) throws {
        state.requests = target.requestCount
        let tx = try store.soupTransaction(c, SyncState.soup, keyPath: nil)
        state.id = try tx.save(state.object)
    }

    func report() {
        progress?(state.text)
    }

    /// The fields every event of sync `state` starts with.
    private static func identity(_ state: SyncState) -> [(String, JSON)] {
        [("syncId", .int(state.id)), ("name", state.name.map { .string($0) } ?? .null),
         ("soup", .string(state.soupName)), ("type", .string(state.kind.rawValue))]
    }

    func event(_ code: SyncEventCode, _ extra: [(String, JSON)] = []) {
        events.emit(code, SyncRun.identity(state) + extra)
    }

    /// Announces records whose outcome just committed, and counts them for
    /// sync_complete.
    func announce(_ code: SyncEventCode, _ records: [RecordEvent], _ extra: (RecordEvent) -> [(String, JSON)] = { _ in [] }) {
        if collectsOutcome && (code == .recordDeltaReceived || code == .remoteUpdateApplied) {
            for r in records { outcome[r.operation, default: []].append(.string(r.recordId)) }
        }
        guard events.wants(code) else { return }
        for r in records {
            event(code, [("recordId", .string(r.recordId)), ("entryId", .int(r.entryId)),
                         ("operation", .string(r.operation.rawValue))] + extra(r))
        }
    }

    /// Runs `body`, then ends the state DONE, or FAILED when records failed
    /// or conflict, or FAILED / STOPPED when the sync itself could not go on.
    /// The state is saved with `end` (SyncClaims.end) and reported in every
    /// case; a state `end` could not save makes the run fail, saying so.
    func finish(end: (SyncState) throws -> Void, _ body: () throws -> Void) -> SyncResult {
        resuming = state.kind == .down && (state.status == .stopped || state.status == .failed) && state.done > 0
        state.begin(resuming: resuming)
        outcome = [:]
        collectsOutcome = events.wants(.syncComplete)
        var failure: TureenError?
        do {
            try store.withWriteTransaction(origin: .sync) { c in try saveState(c) }
            report()
            event(.syncStarted)
            try body()
            // LEAVE_IF_CHANGED leaving server-changed records alone is what
            // was asked for: DONE, as SmartSync says, with the conflicts
            // counted and listed. Failed records always fail the sync.
            let conflictsFail = state.options.mergeMode != .leaveIfChanged && !state.conflictIds.isEmpty
            if state.failedCount > 0 || conflictsFail {
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
        state.requests = target.requestCount
        Fault.point("sync.run.before_end")
        do {
            try end(state)
        } catch let e as TureenError {
            failure = SyncRun.unsaved(e, after: failure)
        } catch {
            failure = SyncRun.unsaved(TureenError(.internal, "\(error)"), after: failure)
        }
        report()
        announceEnd(failure)
        return SyncResult(state: state.text, error: failure)
    }
}

extension SyncRun {
    /// Errors of the store itself (not of the server or the caller).
    static func isStorageFailure(_ e: TureenError) -> Bool {
        [.io, .busy, .corrupt, .key].contains(e.code)
    }

    /// What a run whose final state could not be saved (`e`) returns: its
    /// own failure, if any (its code still says how the run went), with
    /// `e`'s message; otherwise `e`.
    static func unsaved(_ e: TureenError, after failure: TureenError?) -> TureenError {
        guard let f = failure else { return e }
        return TureenError(f.code, f.message + "; " + e.message, retryAt: f.retryAt, httpStatus: f.httpStatus)
    }

    private func announceEnd(_ failure: TureenError?) {
        SyncRun.announceEnd(state, outcome: outcome, failure, events: events)
    }

    /// The end of a run of `loaded` that could not start (nothing saved):
    /// told and returned as a failed run.
    static func unstarted(_ loaded: SyncState, _ failure: TureenError, events: SyncEvents) -> SyncResult {
        var state = loaded
        state.begin(resuming: true)
        state.status = .failed
        state.error = failure.message
        state.endTime = Clock.nowMs()
        announceEnd(state, outcome: [:], failure, events: events)
        return SyncResult(state: state.text, error: failure)
    }

    private static func announceEnd(_ state: SyncState, outcome: [RecordOperation: [JSON]], _ failure: TureenError?,
                                    events: SyncEvents) {
        func event(_ code: SyncEventCode, _ extra: [(String, JSON)]) { events.emit(code, identity(state) + extra) }
        let counts: [(String, JSON)] = [("status", .string(state.status.rawValue)), ("synced", .int(Int64(state.synced))),
                                        ("failed", .int(Int64(state.failedCount))), ("conflicts", .int(Int64(state.conflictIds.count)))]
        guard let f = failure else {
            func ids(_ op: RecordOperation) -> JSON { .array(outcome[op] ?? []) }
            event(.syncComplete, counts + [("created", ids(.create)), ("updated", ids(.update)), ("deleted", ids(.delete))])
            return
        }
        let why: [(String, JSON)] = [("error", .string(f.message)), ("errorCode", .int(Int64(f.code.rawValue))),
                                     ("retryAt", f.retryAt.map { .int($0) } ?? .null)]
        if isStorageFailure(f) { event(.clientStorageFailed, why) }
        event(.syncFailed, counts + why)
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
