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
    typealias Callback = (String) -> Void

    enum Event {
        case changes([[SoupChange]])
        case firstRun(Int)
    }

    final class Registration {
        enum Kind {
            case soup(String?)
            case live(QuerySpec, soups: Set<String>)
        }
        let id: Int
        let kind: Kind
        let callback: Callback
        let release: (() -> Void)?
        /// Guarded by the notifier's condition.
        var removed = false
        var releaseAfterCallback = false
        /// Live queries: the text last delivered (only this thread touches it).
        var last: String?

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
        let box = Unmanaged.passRetained(self)
        var t = pthread_t()
        let rc = pthread_create(&t, nil, { arg in
            guard let arg = arg else { return nil }
            let n = Unmanaged<Notifier>.fromOpaque(arg).takeRetainedValue()
            n.loop()
            return nil
        }, box.toOpaque())
        guard rc == 0 else {
            box.release()
            throw TureenError(.internal, "cannot start the notification thread (pthread_create: \(rc))")
        }
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
        var touched = Set<String>()
        var firstRuns = Set<Int>()
        for e in events {
            switch e {
            case .firstRun(let id): firstRuns.insert(id)
            case .changes(let commits):
                for commit in commits {
                    for change in commit {
                        touched.insert(change.soup)
                        let text = change.text
                        for r in snapshot() {
                            if case .soup(let filter) = r.kind, filter == nil || filter == change.soup { deliver(r, text) }
                        }
                    }
                }
            }
        }
        if external { announceExternal() }
        for r in snapshot() {
            guard case .live(let spec, let soups) = r.kind else { continue }
            if external || firstRuns.contains(r.id) || !soups.isDisjoint(with: touched) { rerun(r, spec) }
        }
    }

    private func snapshot() -> [Registration] { state.withLock { registrations } }

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
        do {
            text = try store.query(spec, pageIndex: 0).string
        } catch let e as TureenError {
            text = JSONWriter.string(.object(JSONObject([("error", .string(e.message)), ("code", .int(Int64(e.code.rawValue)))])))
        } catch {
            return
        }
        guard text != r.last else { return }
        r.last = text
        deliver(r, text)
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
