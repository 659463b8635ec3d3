import Glibc

/// A store handle's listeners and the one thread that calls them back.
///
/// Committed changes arrive as events (from this handle, from other handles
/// of the file through ChangeHub, or as "something changed" when another
/// process wrote, seen by polling SQLite's data_version). The thread takes
/// every event queued so far, calls the soup listeners once per commit per
/// soup, in commit order, then re-runs each live query whose soups were
/// touched, once for the whole lot: a burst of commits costs one re-run, and
/// one more if commits arrived while it ran. It never runs while the handle's
/// write lock is held by it, so callbacks may read and write the store.
final class Notifier: @unchecked Sendable {
    // Unchecked: vars are touched under `state`'s mutex, but the last data version: only its own thread's.
    typealias Callback = (String) -> Void

    enum Event {
        case changes([[SoupChange]])
        case firstRun(Int)
        /// A sync event of the sync engine: its code and its JSON text.
        case sync(code: String, text: String)
    }

    final class Registration {
        enum Kind {
            case soup(String?)
            case live(QuerySpec, soups: Set<String>)
            /// Sync events whose code is in the set (every code when nil).
            case sync(Set<String>?)
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

        init(id: Int, kind: Kind, callback: @escaping Callback, release: (() -> Void)?) {
            self.id = id
            self.kind = kind
            self.callback = callback
            self.release = release
        }
    }

    /// How often other processes' commits are looked for while idle.
    static let pollMs = 100

    private unowned let store: Store
    private let state = Condition()
    private var queue: [Event] = []
    private var registrations: [Registration] = []
    private var nextId = 1
    private var running: Int?
    private var stopping = false
    private var thread: pthread_t?
    private var threadStarted = false
    /// SQLite's data_version on the writer and the hub's count at the last look.
    private var lastDataVersion: Int64?
    private var lastPublished: UInt64 = 0

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
        if start { try startThread() }
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

    /// Whether a sync listener wants events with `code`: the engine builds
    /// an event's text only when one does.
    func wantsSync(_ code: String) -> Bool {
        state.withLock {
            registrations.contains { r in
                if case .sync(let codes) = r.kind { return codes?.contains(code) ?? true }
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
            let external = events.isEmpty && otherProcessWrote()
            if events.isEmpty && !external { continue }
            dispatch(events, external: external)
        }
    }

    private func dispatch(_ events: [Event], external: Bool) {
        // Per soup, the entries the commits touched; `wide` soups changed in
        // ways no id list describes (clear, alter, drop).
        var touched: [String: Set<Int64>] = [:]
        var wide = Set<String>()
        var firstRuns = Set<Int>()
        for e in events {
            switch e {
            case .firstRun(let id): firstRuns.insert(id)
            case .sync(let code, let text):
                for r in snapshot() {
                    if case .sync(let codes) = r.kind, codes?.contains(code) ?? true { deliver(r, text) }
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
        if external { announceExternal() }
        // Which live queries to re-run is decided on one reader connection
        // for all of them; the re-runs then read the store as any query does.
        var due: [(Registration, QuerySpec)] = []
        let decide = { (c: Connection?) in
            for r in self.snapshot() {
                guard case .live(let spec, let soups) = r.kind else { continue }
                if external || firstRuns.contains(r.id) || !soups.isDisjoint(with: wide) {
                    due.append((r, spec))
                } else if soups.contains(where: { touched[$0] != nil }) && self.mayHaveChanged(r, spec, touched, c) {
                    due.append((r, spec))
                }
            }
        }
        if (try? store.withReader({ c in decide(c) })) == nil { due = []; decide(nil) }
        for (r, spec) in due { rerun(r, spec) }
    }

    /// For an entry query whose page is known: its page can only change if
    /// an entry on it changed, or a changed entry now matches the query.
    /// Smart SQL (any soup, any expression) is always re-run, and so is
    /// everything when no connection could be had to look.
    private func mayHaveChanged(_ r: Registration, _ spec: QuerySpec, _ touched: [String: Set<Int64>], _ c: Connection?) -> Bool {
        guard let c = c, let page = r.pageIds, let ids = touched[spec.soupName ?? ""] else { return true }
        if !page.isDisjoint(with: ids) { return true }
        return (try? store.anyMatches(spec, ids: Array(ids), on: c)) ?? true
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

    private func rerun(_ r: Registration, _ spec: QuerySpec) {
        let text: String
        var failed = false
        do {
            text = try store.query(spec, pageIndex: 0).string
        } catch let e as TureenError {
            text = JSONWriter.string(.object(JSONObject([("error", .string(e.message)), ("code", .int(Int64(e.code.rawValue)))])))
            failed = true
        } catch {
            return
        }
        guard text != r.last else { return }
        r.last = text
        // A failed page names no entries, yet removing one can make it
        // succeed (a page that outgrew query_memory_mb): it re-runs on
        // every change to its soups until it succeeds.
        r.pageIds = !failed && spec.kind != .smart && spec.selectPaths == nil ? Notifier.entryIds(in: text) : nil
        deliver(r, text)
    }

    /// The _soupEntryId values in an entry query's JSON page. An entry that
    /// holds that key in its own data only adds ids, which costs a re-run,
    /// never a missed one.
    static func entryIds(in text: String) -> Set<Int64> {
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
                while utf8[i] >= 0x30 && utf8[i] <= 0x39 && digits < 18 {
                    n = n * 10 + Int64(utf8[i] - 0x30)
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

    /// Whether SQLite's data_version moved while this process published
    /// nothing for the file: another process committed. Looked at on the
    /// writer connection, whose own commits leave it unchanged; skipped while
    /// a writer is busy (the next poll sees it).
    private func otherProcessWrote() -> Bool {
        guard let v = store.dataVersionIfIdle() else { return false }
        let published = ChangeHub.publishedCount(path: store.canonicalPath)
        defer {
            lastDataVersion = v
            lastPublished = published
        }
        guard let before = lastDataVersion else { return false }
        return v != before && published == lastPublished
    }

    /// Tells soup listeners that a soup may have changed in another process:
    /// which entries is not known, so the lists are empty.
    private func announceExternal() {
        guard let names = try? store.soupNames() else { return }
        for name in names {
            let text = SoupChange(soup: name, created: [], updated: [], deleted: [], origin: .external,
                                  cleared: false, altered: false, dropped: false).text
            for r in snapshot() {
                if case .soup(let filter) = r.kind, filter == nil || filter == name { deliver(r, text) }
            }
        }
    }
}
