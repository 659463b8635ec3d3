import Glibc
import TureenCore

/// A store handle's listeners and the one thread that calls them back.
///
/// Committed changes arrive as events (from this handle, from other handles
/// of the file through ChangeHub, or, when another process wrote, seen by
/// polling SQLite's data_version and read from the change feed). The thread
/// takes every event queued so far, calls the soup listeners once per commit per
/// soup, in commit order, then re-runs each live query whose soups were
/// touched, once for the whole lot: a burst of commits costs one re-run, and
/// one more if commits arrived while it ran. It never runs while the handle's
/// write lock is held by it, so callbacks may read and write the store.
final class Notifier: @unchecked Sendable {
    // Unchecked: vars are touched under `state`'s mutex, but the last data version and feed position: only its own thread's (and the first listener's, before that thread starts).
    typealias Callback = (String) -> Void

    enum Event {
        case changes([[SoupChange]])
        case firstRun(Int)
        /// An event an engine above the store publishes: its code and its
        /// text, both opaque here.
        case engine(code: String, text: String)

        var isCommit: Bool {
            if case .changes = self { return true }
            return false
        }

        var isFirstRun: Bool {
            if case .firstRun = self { return true }
            return false
        }
    }

    final class Registration {
        enum Kind {
            case soup(String?)
            case live(QuerySpec, soups: Set<String>)
            /// Engine events whose code is in the set (every code when nil).
            case engine(Set<String>?)
        }
        let id: Int
        let kind: Kind
        let callback: Callback
        let release: (() -> Void)?
        /// Guarded by the notifier's condition.
        var removed = false
        var releaseAfterCallback = false
        /// Live queries: the text last delivered, and for entry queries the
        /// ids of the entries on it (only this thread touches them).
        var last: String?
        var pageIds: Set<Int64>?
        /// The writer's data_version when the page was read in a snapshot
        /// that held exactly the commits this notifier had taken (see
        /// `exactVersion`); nil when not known to be so.
        var pageVersion: Int64?

        init(id: Int, kind: Kind, callback: @escaping Callback, release: (() -> Void)?) {
            self.id = id
            self.kind = kind
            self.callback = callback
            self.release = release
        }
    }

    /// How often other processes' commits are looked for while idle.
    static let pollMs = 100
    /// The longest rest between dispatches under a stream of commits.
    static let restMs: Int64 = 50

    private unowned let store: Store
    private let state = Condition()
    private var queue: [Event] = []
    private var registrations: [Registration] = []
    private var nextId = 1
    private var running: Int?
    private var stopping = false
    private var thread: pthread_t?
    private var threadStarted = false
    /// SQLite's data_version on the writer and the count of the file's
    /// other handles' commits at the last look.
    private var lastDataVersion: Int64?
    private var lastPublished: UInt64 = 0
    /// The change feed's newest position at the last look: other processes'
    /// changes after it are told to soup listeners with their ids.
    private var lastFeedSeq: Int64?

    init(store: Store) { self.store = store }

    var isNotifierThread: Bool {
        guard let t = state.withLock({ thread }) else { return false }
        return pthread_equal(pthread_self(), t) != 0
    }

    // MARK: registration

    func add(_ kind: Registration.Kind, _ callback: @escaping Callback, release: (() -> Void)?) throws -> Int {
        let (id, start): (Int, Bool) = try state.withLock {
            if stopping { throw TureenError.misuse("the store is closed") }
            let id = nextId
            nextId += 1
            registrations.append(Registration(id: id, kind: kind, callback: callback, release: release))
            if case .live = kind { queue.append(.firstRun(id)) }
            state.broadcast()
            let start = !threadStarted
            threadStarted = true
            return (id, start)
        }
        if start {
            // What other processes had committed when the first listener
            // came, before the thread reads any page; without it the first
            // idle look had nothing to compare with and read every live
            // query again. Not known while a writer holds the store: that
            // first look then does so.
            // Read before the data version: another process's commit in
            // between is then told with the next one it sees, not lost.
            lastFeedSeq = store.newestChangeSeq()
            if let v = store.dataVersionIfIdle() {
                lastDataVersion = v
                lastPublished = ChangeHub.publishedCount(path: store.canonicalPath, byOtherThan: ObjectIdentifier(store))
            }
            try startThread()
        }
        return id
    }

    /// Removes a listener: after this returns its callback never runs again
    /// and its release has run, exactly once. From inside its own callback
    /// it cannot wait for itself: the release then runs when the callback
    /// returns.
    func remove(_ id: Int) throws {
        let me = isNotifierThread
        let released: Registration? = try state.withLock {
            guard let i = registrations.firstIndex(where: { $0.id == id }) else {
                throw TureenError.misuse("the listener was already removed")
            }
            let r = registrations.remove(at: i)
            r.removed = true
            if running == id {
                if me {
                    r.releaseAfterCallback = true
                    return nil
                }
                while running == id { state.wait() }
            }
            return r
        }
        released?.release?()
    }

    /// Whether an engine listener wants events with `code`: the engine
    /// builds an event's text only when one does.
    func wantsEngineEvent(_ code: String) -> Bool {
        state.withLock {
            registrations.contains { r in
                if case .engine(let codes) = r.kind { return codes?.contains(code) ?? true }
                return false
            }
        }
    }

    func enqueue(_ e: Event) {
        state.withLock {
            guard !stopping else { return }
            queue.append(e)
            state.broadcast()
        }
    }

    /// Stops the thread (waiting for a callback in flight, unless called from
    /// one) and releases every listener still registered.
    func shutdown() {
        let me = isNotifierThread
        let (left, t): ([Registration], pthread_t?) = state.withLock {
            stopping = true
            state.broadcast()
            let left = registrations
            registrations = []
            for r in left {
                r.removed = true
                if me && running == r.id { r.releaseAfterCallback = true }
            }
            return (left, thread)
        }
        if let t = t {
            if me { pthread_detach(t) } else { pthread_join(t, nil) }
        }
        for r in left where !r.releaseAfterCallback { r.release?() }
    }

    // MARK: the thread

    private func startThread() throws {
        let t = try ThreadBody.start("deliver the store's notifications") { self.loop() }
        state.withLock {
            thread = t
            state.broadcast()
        }
    }

    private func loop() {
        // The creating thread records the id right after pthread_create.
        state.withLock { while thread == nil && !stopping { state.wait() } }
        while true {
            let (events, stop): ([Event], Bool) = state.withLock {
                if queue.isEmpty && !stopping { state.wait(ms: Notifier.pollMs) }
                defer { queue = [] }
                return (queue, stopping)
            }
            if stop { return }
            let other = events.isEmpty ? otherConnectionsWrote() : .none
            if events.isEmpty && other == .none { continue }
            let began = Clock.monotonicNs()
            dispatch(events, other: other)
            rest(after: Int64((Clock.monotonicNs() &- began) / 1_000_000))
        }
    }

    /// Under a stream of commits, waits as long as the last dispatch took
    /// (at most `restMs`) before the next one, letting commits gather:
    /// read back to back, the re-runs' snapshots left the writer no moment
    /// to start the write-ahead log over, which then grew past 100 MB and
    /// made a burst of single writes twice as slow. A commit that finds
    /// the thread idle is dispatched at once, and so is a live query just
    /// registered (its first page comes right away).
    private func rest(after ms: Int64) {
        let until = Clock.monotonicNs() &+ UInt64(min(max(ms, 0), Notifier.restMs)) * 1_000_000
        state.withLock {
            guard !queue.isEmpty else { return }
            // Each event queued meanwhile wakes the wait.
            while !stopping && !queue.contains(where: \.isFirstRun) {
                let now = Clock.monotonicNs()
                guard now < until else { return }
                state.wait(ms: max(1, Int((until - now) / 1_000_000)))
            }
        }
    }

    private func dispatch(_ events: [Event], other: OtherWrites) {
        // Per soup, the entries the commits touched; `wide` soups changed in
        // ways no id list describes (clear, alter, drop).
        var touched: [String: Set<Int64>] = [:]
        var wide = Set<String>()
        var firstRuns = Set<Int>()
        for e in events {
            switch e {
            case .firstRun(let id): firstRuns.insert(id)
            case .engine(let code, let text):
                for r in snapshot() {
                    if case .engine(let codes) = r.kind, codes?.contains(code) ?? true { deliver(r, text) }
                }
            case .changes(let commits):
                for commit in commits {
                    for change in commit {
                        touched[change.soup, default: []].formUnion(change.created + change.updated + change.deleted)
                        if change.cleared || change.altered || change.dropped { wide.insert(change.soup) }
                        let text = change.text
                        for r in snapshot() {
                            if case .soup(let filter) = r.kind, filter == nil || filter == change.soup { deliver(r, text) }
                        }
                    }
                }
            }
        }
        // A callback may have closed the store (the listener rules allow
        // any call): the store is gone once it returns, so nothing more
        // of it is read.
        if isStopping { return }
        if other != .none { announceExternal() }
        if isStopping { return }
        // Which live queries to re-run is decided on one reader connection
        // for all of them; they re-run there, in one snapshot held only for
        // the re-runs (a snapshot held across the decisions too kept the WAL
        // from being checkpointed under a burst of writes, and made each
        // write three times slower). The callbacks come once the reader is
        // given back.
        var pages: [Page] = []
        let read = { (c: Connection?) in
            var due: [(Registration, QuerySpec, among: Set<Int64>?)] = []
            for (r, spec, rerun) in self.decide(touched, wide: wide, firstRuns: firstRuns, other: other, on: c) {
                switch rerun {
                case .no: break
                case .whole: due.append((r, spec, nil))
                case .among(let ids): due.append((r, spec, ids))
                }
            }
            guard !due.isEmpty else { return }
            let rerun = { (version: Int64?) in
                for (r, spec, among) in due {
                    let narrow = version != nil && r.pageVersion == version ? among : nil
                    if let p = self.run(r, spec, among: narrow, on: c, version: version) { pages.append(p) }
                }
            }
            guard let c = c else { return rerun(nil) }
            do {
                try c.snapshot { rerun(self.exactVersion()) }
            } catch {
                pages = []
                rerun(nil)
            }
        }
        let readThere: Void? = try? store.withReader { c in read(c) }
        if readThere == nil {
            pages = []
            read(nil)
        }
        for page in pages { settle(page) }
    }

    /// Whether a live query's page must be read again, and where.
    private enum Rerun {
        case no
        case whole
        /// Among its page's entries and the changed ones: a page that holds
        /// none of the changed entries can only take some of them in, each
        /// pushing its last entry out.
        case among(Set<Int64>)
    }

    /// Each live query and whether it must re-run, in the order registered.
    /// A page cannot have changed when none of the changed entries matches
    /// it; that is asked for every live query of a soup at once. Smart SQL
    /// (any soup, any expression) is always read whole, and so is everything
    /// when no connection could be had to look.
    private func decide(_ touched: [String: Set<Int64>], wide: Set<String>, firstRuns: Set<Int>, other: OtherWrites,
                        on c: Connection?) -> [(Registration, QuerySpec, Rerun)] {
        var out: [(Registration, QuerySpec, Rerun)] = []
        // Per soup, where in `out` its undecided queries are.
        var asking: [String: [Int]] = [:]
        for r in snapshot() {
            guard case .live(let spec, let soups) = r.kind else { continue }
            if other != .none || firstRuns.contains(r.id) || !soups.isDisjoint(with: wide) {
                out.append((r, spec, .whole))
            } else if soups.contains(where: { touched[$0] != nil }) {
                let soup = spec.soupName ?? ""
                guard c != nil, let page = r.pageIds, let ids = touched[soup], page.isDisjoint(with: ids) else {
                    out.append((r, spec, .whole))
                    continue
                }
                asking[soup, default: []].append(out.count)
                out.append((r, spec, .no))
            }
        }
        guard let c = c else { return out }
        for (soup, at) in asking {
            guard let ids = touched[soup] else { continue }
            let answers = (try? store.anyMatches(at.map { out[$0].1 }, ids: ids.sorted(), on: c)) ?? []
            for (k, i) in at.enumerated() {
                switch k < answers.count ? answers[k] : nil {
                case false?: out[i].2 = .no
                case true?: out[i].2 = .among((out[i].0.pageIds ?? []).union(ids))
                case nil: out[i].2 = .whole
                }
            }
        }
        return out
    }

    /// The writer's data_version, read with the write lock held (no write
    /// under way) and no commit waiting, just after a snapshot began. That
    /// snapshot then holds every commit of this handle that this notifier
    /// has taken and none it has not (a commit publishes under the lock),
    /// and nothing committed since the events were taken, so the decisions
    /// made since hold in it; the data_version moves only when another
    /// connection (of this process or another) commits. Two snapshots of
    /// one version thus differ by the commits taken in between, whose
    /// entries the events name: only then may a page read in the first be
    /// brought to the second from them. nil when the lock is busy. Other
    /// events waiting (a live query registered, an engine event) hold no
    /// commit: counting them made every live query registered in a row
    /// read its next page whole.
    private func exactVersion() -> Int64? {
        guard store.lock.tryLock() else { return nil }
        defer { store.lock.unlock() }
        guard !state.withLock({ queue.contains(where: \.isCommit) }) else { return nil }
        return try? store.writerIfOpen?.scalarInt("PRAGMA data_version")
    }

    /// A live query's page, read and not yet delivered.
    private struct Page {
        let registration: Registration
        let text: String
        let ids: Set<Int64>?
        let version: Int64?
    }

    /// A live query's first page, read on `c` in its snapshot when given
    /// (only among the entries `among` when given), else on a reader of
    /// its own; nil when it failed other than as a query fails.
    private func run(_ r: Registration, _ spec: QuerySpec, among: Set<Int64>?, on c: Connection?, version: Int64?) -> Page? {
        do {
            let page = try among.flatMap { try store.firstPage(spec, among: $0, on: c) } ?? store.query(spec, pageIndex: 0, on: c)
            let text = page.string
            let ids = spec.kind != .smart && spec.selectPaths == nil ? Notifier.entryIds(in: text) : nil
            return Page(registration: r, text: text, ids: ids, version: c == nil ? nil : version)
        } catch let e as TureenError {
            // A failed page names no entries, yet removing one can make it
            // succeed (a page that outgrew query_memory_mb): it re-runs on
            // every change to its soups until it succeeds.
            let text = JSONWriter.string(.object(JSONObject([("error", .string(e.message)), ("code", .int(Int64(e.code.rawValue)))])))
            return Page(registration: r, text: text, ids: nil, version: nil)
        } catch {
            return nil
        }
    }

    /// A copy in a buffer of its own. A plain copy shares the array's buffer
    /// until the next change, and that change (under the lock) is judged
    /// safe by the reference count, which the static runtime keeps where
    /// ThreadSanitizer cannot see: it reported the iteration here against
    /// `remove`. Owning the buffer costs one allocation per event and leaves
    /// nothing to judge.
    private func snapshot() -> [Registration] { state.withLock { registrations.map { $0 } } }

    private func deliver(_ r: Registration, _ text: String) {
        let go: Bool = state.withLock {
            guard !r.removed && !stopping else { return false }
            running = r.id
            return true
        }
        guard go else { return }
        r.callback(text)
        let release: Bool = state.withLock {
            running = nil
            state.broadcast()
            return r.releaseAfterCallback
        }
        if release { r.release?() }
    }

    /// Keeps what a page says of its entries, and delivers it when it
    /// differs from the last one delivered.
    private func settle(_ p: Page) {
        let r = p.registration
        r.pageIds = p.ids
        r.pageVersion = p.version
        guard p.text != r.last else { return }
        r.last = p.text
        deliver(r, p.text)
    }

    /// The _soupEntryId values in an entry query's JSON page. An entry that
    /// holds that key in its own data only adds ids, which costs a re-run,
    /// never a missed one; a value past Int64 there makes the page unknown
    /// (nil), as an id cut short would be missed.
    static func entryIds(in text: String) -> Set<Int64>? {
        var ids = Set<Int64>()
        let key = Array("\"_soupEntryId\":".utf8)
        var utf8 = Array(text.utf8)
        utf8.append(0)
        var i = 0
        while i + key.count < utf8.count {
            if utf8[i] == key[0] && utf8[i..<(i + key.count)].elementsEqual(key) {
                i += key.count
                var n: Int64 = 0
                var digits = 0
                while utf8[i] >= 0x30 && utf8[i] <= 0x39 {
                    // Past Int64 it is no entry id: the page is then not known.
                    let (times10, o1) = n.multipliedReportingOverflow(by: 10)
                    let (next, o2) = times10.addingReportingOverflow(Int64(utf8[i] - 0x30))
                    if o1 || o2 { return nil }
                    n = next
                    i += 1
                    digits += 1
                }
                if digits > 0 { ids.insert(n) }
            } else {
                i += 1
            }
        }
        return ids
    }

    // MARK: other processes

    private var isStopping: Bool { state.withLock { stopping } }

    /// What SQLite's data_version, looked at on the writer connection (whose
    /// own commits leave it unchanged), says of commits by other connections.
    enum OtherWrites {
        case none
        /// It moved while the file's other handles in this process published
        /// nothing: another process committed.
        case otherProcess
        /// It moved while another handle here published too: another
        /// process may have committed as well, unseen.
        case maybeOtherProcess
    }

    /// Skipped while a writer is busy (the next poll sees it).
    private func otherConnectionsWrote() -> OtherWrites {
        guard let v = store.dataVersionIfIdle() else { return .none }
        let published = ChangeHub.publishedCount(path: store.canonicalPath, byOtherThan: ObjectIdentifier(store))
        defer {
            lastDataVersion = v
            lastPublished = published
        }
        // A first look with nothing to compare with (the writer was busy
        // when the first listener came, see `add`): commits may have come
        // since, so live queries are read again, no soup listener is told.
        guard let before = lastDataVersion else { return .maybeOtherProcess }
        guard v != before else { return .none }
        return published == lastPublished ? .otherProcess : .maybeOtherProcess
    }

    /// Tells soup listeners what other processes changed, from the change
    /// feed: per soup, their entries since the last look, folded. Without a
    /// position to start from, it only takes one; when the feed no longer
    /// holds every change since, every soup is told with empty lists (which
    /// entries changed is not known then).
    private func announceExternal() {
        guard let after = lastFeedSeq else {
            lastFeedSeq = store.newestChangeSeq()
            return
        }
        guard let (found, newest) = store.othersChanges(after: after) else { return }
        lastFeedSeq = newest
        let changes: [SoupChange]
        if let found = found {
            changes = found
        } else {
            guard let names = try? store.soupNames() else { return }
            changes = names.map {
                SoupChange(soup: $0, created: [], updated: [], deleted: [], origin: .external, cleared: false, altered: false, dropped: false)
            }
        }
        for change in changes {
            let text = change.text
            for r in snapshot() {
                if case .soup(let filter) = r.kind, filter == nil || filter == change.soup { deliver(r, text) }
            }
        }
    }
}
