import Glibc
import TureenStore
import TureenCore

/// The syncs one store handle runs (or changes) now: their cancel flags,
/// and their claims in the store (SyncRunners), which other handles and
/// processes see. A soup's syncs run one at a time: a claim waits for the
/// soup's other sync to end, or is refused.
final class SyncClaims: @unchecked Sendable {
    // Unchecked: the vars are touched only under `lock`.
    private let store: Store
    private let lock = Lock()
    private var flags: [Int64: CancelFlag] = [:]
    private var held: [Int64: (claim: SyncRunners.Claim, thread: UInt)] = [:]
    /// Held claims whose row the run's `end` saw to: `release` leaves the store alone.
    private var ended: Set<Int64> = []
    /// Claims whose row could not be deleted (the store busy past its
    /// timeout, a full disk), with the outcome of the run that could not be
    /// saved with it, if any. This process's other handles see them ended,
    /// other processes do not (their owner lives), so they are written as
    /// soon as the store lets them (`retrier`), or with the handle's next
    /// claim or release, and at the latest at its close.
    private var unreleased: [Unreleased] = []
    private typealias Unreleased = (syncId: Int64, claim: SyncRunners.Claim, outcome: SyncState?)
    /// Writes `unreleased` in the background: an idle handle would
    /// otherwise keep a sync RUNNING, and its soup held, for other
    /// processes for as long as it stays open.
    private let retrier = WriteRetrier()
    /// How often a run's end is tried while the store is locked past its
    /// busy timeout (each try waits that long), unless the handle closes:
    /// a lock held a little longer does not leave the outcome unsaved, one
    /// held for good (a transaction of a thread waiting for this run) does
    /// not hold the caller for long.
    static let endTries = 3
    private var closed = false
    /// The threads that hold claims now, on any handle, with how many: such
    /// a thread never waits for a soup (see `claim`).
    private static let threads = Locked<[UInt: Int]>([:])

    init(store: Store) { self.store = store }

    /// The cancel flag of sync `id`, while this handle runs it.
    func flag(_ id: Int64) -> CancelFlag? { lock.withLock { flags[id] } }

    /// Makes sync `id` of `soup` this handle's to run or change until
    /// `release`: on this handle (where its cancel flag lives), then in the
    /// store. While another sync of the soup runs, anywhere, `waiting` waits
    /// for it to end, or for the flag or `closing` to be raised; otherwise
    /// that is refused as running now.
    func claim(_ id: Int64, soup: String, _ given: CancelFlag?, waiting: Bool, closing: CancelFlag) throws -> CancelFlag {
        let f = try lock.withLock {
            if closed { throw TureenError.misuse("the store handle is closed") }
            if flags[id] != nil { throw TureenError.misuse("sync \(id) is running now") }
            let f = given ?? CancelFlag()
            flags[id] = f
            return f
        }
        do {
            let h = try claimInStore(id, soup: soup, waiting: waiting, wait: CancelFlag(parent: f, also: closing))
            lock.withLock { held[id] = h }
        } catch {
            _ = lock.withLock { flags.removeValue(forKey: id) }
            throw error
        }
        return f
    }

    private func claimInStore(_ id: Int64, soup: String, waiting: Bool, wait: CancelFlag) throws -> (claim: SyncRunners.Claim, thread: UInt) {
        let thread = UInt(pthread_self())
        var waited = false
        while true {
            let found: SyncRunners.Outcome
            do {
                // Read first, and write only when the sync and its soup look
                // free (the claim checks again: the read may be stale). A
                // wait then polls without the write lock, which the run it
                // waits for, or any other writer, may need for long.
                if let held = try store.withReadTransaction({ c in try SyncRunners.holder(c, syncId: id, soup: soup) }) {
                    found = held
                } else {
                    found = try inStore { c in try SyncRunners.claim(c, syncId: id, soup: soup) }
                }
            } catch let e as TureenError where e.code == .busy && waited {
                // The store locked past its busy timeout while this call
                // waits: it waits on (still cancellable, and ended by close)
                // rather than fail a run that has not started.
                try wait.sleep(ms: 20)
                continue
            }
            switch found {
            case .claimed(let claim):
                SyncClaims.threads.withLock { $0[thread, default: 0] += 1 }
                return (claim, thread)
            case .syncHeld:
                throw TureenError.misuse("sync \(id) is running now on another store handle or in another process")
            case .soupHeld(let other):
                // A thread that holds a claim (a callback target's callable
                // or a progress callback, syncing again) would wait for
                // itself; one in its own transaction holds the write lock
                // the other run needs to end.
                let holding = store.ownsTransaction || SyncClaims.threads.withLock { $0[thread] != nil }
                guard waiting && !holding else {
                    throw TureenError.misuse("sync \(other) of soup '\(soup)' is running now; a soup's syncs run one at a time")
                }
                waited = true
                try wait.sleep(ms: 20)
            }
        }
    }

    /// Saves `outcome`, the final state of this handle's run of sync `id`,
    /// and deletes the run's claim, in one commit: no handle or process
    /// ever sees the sync free and RUNNING while its run lives. When that
    /// cannot be written, the handle keeps both (see `unreleased`) and
    /// shows the outcome meanwhile (`shown`); the error says so. Once the
    /// handle has closed (close called from a callback of the run) nothing
    /// can be kept: the error is the store's.
    func end(_ id: Int64, _ outcome: SyncState, closing: CancelFlag) throws {
        guard let claim = lock.withLock({ held[id]?.claim }) else {
            throw TureenError(.internal, "sync \(id) ended without its claim")
        }
        var tries = 1
        while true {
            do {
                try inStore { c in try write(c, (id, claim, outcome)) }
                _ = lock.withLock { ended.insert(id) }
                return
            } catch let e as TureenError where e.code == .busy && tries < SyncClaims.endTries && !closing.isRaised {
                tries += 1
            } catch let e as TureenError {
                let kept = lock.withLock { () -> Bool in
                    ended.insert(id)
                    if closed { return false }
                    unreleased.append((id, claim, outcome))
                    return true
                }
                guard kept else { throw e }
                retryInBackground()
                Log.write(.warning, .sync, "sync \(id): its outcome could not be saved yet (\(e)); the handle saves it once the store lets it, at the latest at its close")
                throw TureenError(e.code, "sync \(id) ended \(outcome.status.rawValue), but that is not saved yet (\(e.message)): this store handle tries again in the background and saves it once the store lets it, at the latest when it closes; until then other processes take the sync for running")
            }
        }
    }

    /// The state to show for `stored`: the outcome of its run that this
    /// handle could not save yet, while the store still holds that run's
    /// RUNNING (a run of another handle of this process may have ended since).
    func shown(_ stored: SyncState) -> SyncState {
        guard stored.status == .running else { return stored }
        let kept = lock.withLock { unreleased.last { $0.syncId == stored.id }?.outcome }
        guard let o = kept, o.startTime == stored.startTime else { return stored }
        return o
    }

    func release(_ id: Int64) {
        if let h = lock.withLock({ held.removeValue(forKey: id) }) {
            let seen = lock.withLock { ended.remove(id) != nil }
            if !seen && !lock.withLock({ closed }) {
                do {
                    try inStore { c in try write(c, (id, h.claim, nil)) }
                } catch {
                    lock.withLock { unreleased.append((id, h.claim, nil)) }
                    retryInBackground()
                    Log.write(.warning, .sync, "sync \(id): its claim could not be removed yet (\(error)); the handle removes it once the store lets it; other processes take the sync for running until then")
                }
            }
            h.claim.end()
            SyncClaims.threads.withLock { t in t[h.thread] = t[h.thread].flatMap { $0 > 1 ? $0 - 1 : nil } }
        }
        _ = lock.withLock { flags.removeValue(forKey: id) }
    }

    /// The handle closes, once its server calls and its loop have ended:
    /// no claim can be made any more, and those left are deleted. They
    /// belong to runs whose callback is closing the store, or to calls
    /// changing a sync on other threads: neither can write once the store
    /// has closed, so their claims must not outlive the handle.
    func releaseAll() {
        let left = lock.withLock { () -> [Unreleased] in
            closed = true
            return held.filter { !ended.contains($0.key) }.map { (syncId: $0.key, claim: $0.value.claim, outcome: nil) }
        }
        // Its last try ends first: this write makes what is left.
        retrier.stop()
        do {
            try inStore { c in for h in left { try write(c, h) } }
        } catch {
            Log.write(.warning, .sync, "claims of syncs could not be removed at close: \(error)")
        }
    }

    private func retryInBackground() {
        retrier.wake { [weak self] in self?.writeUnreleased() ?? true }
    }

    /// The retrier's try: writes the unreleased claims, unless the handle
    /// has closed (its close writes them); whether none is left to write.
    private func writeUnreleased() -> Bool {
        if lock.withLock({ closed || unreleased.isEmpty }) { return true }
        do { try inStore { _ in } } catch { return false }
        return lock.withLock { unreleased.isEmpty }
    }

    /// Runs `body` in a write transaction that first writes the unreleased
    /// claims' outcomes and deletes their rows.
    private func inStore<T>(_ body: (StoreTransaction) throws -> T) throws -> T {
        let stale = lock.withLock { unreleased }
        let result = try store.withWriteTransaction(origin: .sync) { c in
            for u in stale { try write(c, u) }
            return try body(c)
        }
        if !stale.isEmpty { lock.withLock { unreleased.removeAll { u in stale.contains { $0.claim == u.claim } } } }
        return result
    }

    /// Saves a run's outcome, if any, and deletes its claim's row. The
    /// outcome only while the row still names the claim: a later run (on
    /// another handle of this process) or a change of the sync claimed it
    /// since and wrote a newer state; nor over a sync deleted meanwhile.
    private func write(_ c: StoreTransaction, _ u: Unreleased) throws {
        if let outcome = u.outcome, try SyncRunners.names(c, syncId: u.syncId, u.claim) {
            let states = try store.soupTransaction(c, SyncState.soup, keyPath: nil)
            if try states.entry(id: u.syncId) != nil { _ = try states.save(outcome.object) }
        }
        try SyncRunners.release(c, syncId: u.syncId, u.claim)
    }
}
