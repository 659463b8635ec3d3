import Glibc
import TureenStore
import TureenCore

/// The background sync loop of one store handle ($fh.sync's): one thread
/// that runs each selected sync when it is due, a soup at a time (its syncs
/// up, then down, or the other way round), one run at a time.
///
/// A sync is due every `frequencyMs`; a local change to a soup makes its
/// syncs up due after `debounceMs` (seen through the store's change stream);
/// `force` makes syncs due now. A run that cannot reach the server is tried
/// again after an exponential delay (capped at `maxBackoffMs`); one the
/// server asked to wait (Retry-After, Backoff) waits until then.
public final class SyncLoop: @unchecked Sendable {
    // Unchecked: vars are touched under `state`'s mutex, but `listener`: set before the manager publishes the loop, read after.
    /// What the loop knows of one sync between runs.
    private struct Schedule {
        var due: Int64
        var failures = 0
        var runs = 0
        var lastError: String?
        var retryAt: Int64?
        /// Cycles a crashed sync up has waited (crashed_count_wait).
        var crashedWaits = 0

        init(due: Int64 = 0, retryAt: Int64? = nil) {
            self.due = due
            self.retryAt = retryAt
        }
    }

    /// A run's retries of a network error. One absorbs a dropped
    /// connection; the target's max_retries (5, with delays doubling) would
    /// hold the report of a network that is gone for seconds ($fh.sync
    /// reports sync_failed at the first cycle that fails), and the loop's
    /// own backoff tries again behind it.
    static let networkRetries = 1

    private let manager: SyncManager
    private var store: Store { manager.store }
    private let config: SyncLoopConfig
    private let state = Condition()
    private var schedules: [Int64: Schedule] = [:]
    private var localDue: [String: Int64] = [:]
    private var forceAll = false
    private var forced = Set<Int64>()
    private var active: Bool
    private var stopping = false
    /// Set by the thread as it ends.
    private var finished = false
    private var current: Int64?
    private var cycles = 0
    private var thread: pthread_t?
    private var listener: Int?

    init(manager: SyncManager, config: SyncLoopConfig) {
        self.manager = manager
        self.config = config
        self.active = config.active
    }

    func start() throws {
        if config.autoSyncLocalUpdates {
            listener = try store.listen(soup: nil, { [weak self] text in self?.noticeChange(text) }, release: nil)
        }
        do {
            let t = try ThreadBody.start("run the sync loop") { self.loop() }
            state.withLock { thread = t }
        } catch {
            if let l = listener { try? store.removeListener(l) }
            throw error
        }
    }

    /// Stops the loop: a run in flight is cancelled at its next safe point
    /// (between pages, batches or requests) and waited for.
    func stop() {
        let t: pthread_t? = state.withLock {
            stopping = true
            state.broadcast()
            return thread
        }
        if let l = listener { try? store.removeListener(l) }
        // Called by the loop's own thread (a callback target stopping it),
        // the run in flight is the caller's: it ends when the caller returns.
        let mine = t.map { pthread_equal($0, pthread_self()) != 0 } ?? false
        if mine {
            if let id = state.withLock({ current }) { try? manager.cancel(String(id)) }
            return
        }
        // A run that was just starting may not take a cancel yet (it takes
        // one once the manager has it): the cancel is sent again until the
        // thread has ended.
        while let id = state.withLock({ () -> Int64?? in
            if finished { return nil }
            state.wait(ms: 20)
            return finished ? nil : .some(current)
        }) {
            if let id = id { try? manager.cancel(String(id)) }
        }
        if let t = t { pthread_join(t, nil) }
    }

    /// Makes a sync (nil: every selected sync) due now, and resumes a
    /// paused loop ($fh.sync's doSync / forceSync).
    func force(_ id: Int64?) throws {
        if let id = id, try !selectedStates().contains(where: { $0.id == id }) {
            throw TureenError.invalid("sync \(id) is not one of the sync loop's \"syncs\": the loop never runs it (run it with \(store.callNames[.resync]), or start the loop with it)")
        }
        state.withLock {
            if let id = id { forced.insert(id) } else { forceAll = true }
            active = true
            state.broadcast()
        }
    }

    func setActive(_ on: Bool) {
        state.withLock {
            active = on
            state.broadcast()
        }
    }

    /// The loop's state as JSON: whether it runs, is paused or offline, and
    /// per sync when it runs next and how its last run ended.
    func status() throws -> String {
        let states = try selectedStates()
        return state.withLock {
            var list: [JSON] = []
            for s in states {
                let k = schedules[s.id] ?? Schedule()
                list.append(.object(JSONObject([
                    ("syncId", .int(s.id)), ("name", s.name.map { .string($0) } ?? .null), ("soup", .string(s.soupName)),
                    ("type", .string(s.kind.rawValue)), ("status", .string(s.status.rawValue)),
                    ("runs", .int(Int64(k.runs))), ("failures", .int(Int64(k.failures))),
                    ("nextRunAt", .int(k.due)), ("lastError", k.lastError.map { .string($0) } ?? .null),
                    ("retryAt", k.retryAt.map { .int($0) } ?? .null),
                ])))
            }
            return JSON.object(JSONObject([
                ("running", .bool(!stopping)), ("active", .bool(active)), ("offline", .bool(manager.isOffline)),
                ("cycles", .int(Int64(cycles))), ("current", current.map { .int($0) } ?? .null),
                ("syncFrequencyMs", .int(Int64(config.frequencyMs))), ("syncs", .array(list)),
            ])).text
        }
    }

    // MARK: the thread

    /// A commit by the app to a soup makes its syncs up due after the
    /// debounce (the sync engine's own commits are not local changes).
    private func noticeChange(_ text: String) {
        guard let o = try? JSONParser.parse(text).objectValue, o["origin"]?.stringValue == "app",
              let soup = o["soup"]?.stringValue else { return }
        state.withLock {
            localDue[soup] = Clock.nowMs() + Int64(config.debounceMs)
            state.broadcast()
        }
    }

    private func loop() {
        defer {
            state.withLock {
                finished = true
                state.broadcast()
            }
        }
        while true {
            // Paused: wait for force, resume or stop.
            let go: Bool? = state.withLock {
                if stopping { return nil }
                if !active { state.wait(ms: 1000) }
                return active
            }
            guard let active = go else { return }
            guard active else { continue }
            let ran = cycle()
            state.withLock {
                if ran { cycles += 1 }
                guard !stopping else { return }
                let wait = nextWakeMs()
                if wait > 0 { state.wait(ms: Int(min(wait, 1000))) }
            }
        }
    }

    /// Milliseconds until something is due (called with the lock held).
    private func nextWakeMs() -> Int64 {
        if forceAll || !forced.isEmpty { return 0 }
        let now = Clock.nowMs()
        var next = now + Int64(config.frequencyMs)
        for s in schedules.values { next = min(next, s.due) }
        for d in localDue.values { next = min(next, d) }
        return max(0, next - now)
    }

    /// The selected syncs' states, in id order.
    private func selectedStates() throws -> [SyncState] {
        let all = try manager.allStates()
        guard let wanted = config.syncs else { return all }
        return all.filter { s in wanted.contains(String(s.id)) || (s.name.map { wanted.contains($0) } ?? false) }
    }

    /// Runs every sync that is due, soup by soup; returns whether any ran.
    private func cycle() -> Bool {
        let states: [SyncState]
        do {
            states = try selectedStates()
        } catch {
            Log.write(.warning, .sync, "sync loop: cannot read the sync states: \(error)")
            return false
        }
        let now = Clock.nowMs()
        // Decide under the lock what is due, then run without it.
        let due: [SyncState] = state.withLock {
            let all = forceAll
            forceAll = false
            // A sync deleted meanwhile is forgotten: its last due time would
            // wake the loop at once, again and again.
            let selected = Set(states.map { $0.id })
            schedules = schedules.filter { selected.contains($0.key) }
            forced = forced.intersection(selected)
            var out: [SyncState] = []
            for s in states {
                // First sight: now, unless the server asked an earlier run
                // (of this loop or before it) to wait.
                let k = schedules[s.id] ?? Schedule(due: max(now, s.retryAt ?? 0), retryAt: s.retryAt)
                let local = s.kind == .up && (localDue[s.soupName].map { $0 <= now } ?? false)
                let forcedNow = all || forced.remove(s.id) != nil
                if forcedNow || local || k.due <= now {
                    out.append(s)
                }
                schedules[s.id] = k
            }
            for (soup, t) in localDue where t <= now { localDue[soup] = nil }
            return out
        }
        guard !due.isEmpty else { return false }
        for s in config.inCycleOrder(due) {
            if state.withLock({ stopping || !active }) { return true }
            Fault.point("sync.loop.cycle")
            run(s)
        }
        return true
    }

    private func run(_ s: SyncState) {
        // A sync up a killed process left RUNNING crashed mid-send: its
        // changes are sent again (safely: the same client ids, If-Match)
        // after crashed_count_wait cycles, or left to the app. One that
        // runs on another handle or process now is no crash: the run below
        // is refused, and the loop comes back at its frequency.
        if s.kind == .up && s.status == .running && !((try? manager.isRunningAnywhere(s.id)) ?? true) {
            let wait: Bool = state.withLock {
                var k = schedules[s.id] ?? Schedule()
                defer { schedules[s.id] = k }
                if !config.resendCrashedUpdates {
                    k.lastError = "a crashed sync up waits for the app (resend_crashed_updates is false)"
                    k.due = Int64.max
                    return true
                }
                if k.crashedWaits < config.crashedCountWait {
                    k.crashedWaits += 1
                    k.due = Clock.nowMs() + Int64(config.frequencyMs)
                    return true
                }
                return false
            }
            if wait { return }
        }
        state.withLock { current = s.id }
        var failure: TureenError?
        do {
            failure = try manager.run(try manager.load(String(s.id)), incremental: true, progress: nil, waiting: false,
                                      networkRetries: SyncLoop.networkRetries).error
        } catch let e as TureenError {
            failure = e
        } catch {
            failure = TureenError(.internal, "\(error)")
        }
        let now = Clock.nowMs()
        state.withLock {
            current = nil
            var k = schedules[s.id] ?? Schedule()
            k.runs += 1
            k.crashedWaits = 0
            k.lastError = failure?.message
            k.retryAt = failure?.retryAt
            // Unreachable, or asked to wait: back off. Anything else (done,
            // records failed, running elsewhere) keeps the frequency.
            k.failures = failure?.code == .network || failure?.retryAt != nil ? k.failures + 1 : 0
            var next = now + Int64(config.frequencyMs)
            if k.failures > 0 {
                let backoff = min(config.maxBackoffMs, max(250, config.frequencyMs / 4) << min(k.failures - 1, 20))
                next = now + Int64(backoff)
            }
            if let r = failure?.retryAt { next = max(next, r) }
            // A Backoff this sync's server asked for, by any run of the handle.
            next = max(next, manager.pauses.until(URLText.origin(s.target["url"]?.stringValue ?? "")))
            k.due = next
            schedules[s.id] = k
        }
    }
}
