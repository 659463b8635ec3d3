import TureenStore
import TureenCore

/// The sync engine's entry points, per store: starts syncs, finds their
/// states, and keeps what only lives in memory (the cancel flags of running
/// syncs and the host's callback targets).
public final class SyncManager: @unchecked Sendable {
    // Unchecked: its vars are touched only under `lock` (the loop under `loopLock`).
    public let store: Store
    let lock = Lock()
    /// The syncs this handle runs now, and their claims in the store.
    let claims: SyncClaims
    /// New named syncs between the call that starts them and their claim of
    /// an id: a cancel by name in that window must not be lost.
    private var starting: [String: CancelFlag] = [:]
    let callbacks = HostRegistry<HostTarget>()
    let auths = HostRegistry<HostAuth>()
    let transformers = HostRegistry<HostTransformer>()
    /// Kinto's Backoff per server, remembered across runs until it expires.
    let pauses = ServerPauses()
    /// The sync loop, while one runs (SyncManager+Loop).
    let loopLock = Lock()
    var loop: SyncLoop?
    /// The cache's size budget and its background refresher (SyncManager+Cache).
    var cacheBudgetBytes = SyncManager.defaultCacheBudget
    var cachePrepared = false
    let cacheRefresher = CacheRefresher()
    /// The calls that talk to a server, which close stops and waits for.
    public let serverCalls = ServerCalls()
    /// Whether the last sync that ended found the server unreachable.
    private var offlineNow = false
    public var isOffline: Bool { lock.withLock { offlineNow } }
    var events: SyncEvents { SyncEvents(store: store) }

    /// Stops the engine when its session closes: the calls that talk to
    /// a server are stopped and waited for, and its callback targets are
    /// released.
    func stop() {
        serverCalls.end()
        // The loop's run stops with the server calls; once the loop has
        // ended, no claim of this handle can be made or be in use.
        stopLoop()
        stopCacheRefresher()
        claims.releaseAll()
        callbacks.removeAll()
        auths.removeAll()
        transformers.removeAll()
    }

    init(_ store: Store) {
        self.store = store
        claims = SyncClaims(store: store)
    }

    public func syncDown(target: TargetSpec, soup: String, options: SyncOptions, progress: ((String) -> Void)?) throws -> SyncResult {
        try start(.down, target: target, soup: soup, options: options, progress: progress)
    }

    public func syncUp(target: TargetSpec, soup: String, options: SyncOptions, progress: ((String) -> Void)?) throws -> SyncResult {
        try start(.up, target: target, soup: soup, options: options, progress: progress)
    }

    private func start(_ kind: SyncKind, target: TargetSpec, soup: String, options opts: SyncOptions, progress: ((String) -> Void)?) throws -> SyncResult {
        let targetJSON = target.json
        try opts.check(for: kind)
        // Before anything is saved or sent: a sync state naming an engine's
        // soup would be refused by every later reset.
        try store.refuseEngineSoup(soup, "synced")
        guard try store.soupExists(soup) else { throw TureenError(.notFound, "no soup named '\(soup)'") }
        _ = try makeTarget(targetJSON, cancel: CancelFlag())  // a bad target fails before any state is saved
        // The flag exists (by name) before the state does, so a cancel from
        // another thread stops the sync however early it comes.
        let flag = CancelFlag()
        if let n = opts.name {
            try lock.withLock {
                if starting[n] != nil { throw TureenError.misuse("a sync named '\(n)' is being started") }
                starting[n] = flag
            }
        }
        defer { if let n = opts.name { _ = lock.withLock { starting.removeValue(forKey: n) } } }
        try store.registerEngineSoup(SyncState.soup, specs: SyncState.specs)  // same specs: nothing to do
        var state = SyncState(kind: kind, name: opts.name, target: targetJSON, soupName: soup, options: opts)
        // Looked up in the transaction that would save it: two calls with a
        // new name cannot both define it.
        let existing: Int64? = try store.withWriteTransaction(origin: .sync) { c in
            try SyncTables.create(c)
            let states = try store.soupTransaction(c, SyncState.soup, keyPath: "name")
            if let n = opts.name, let id = try states.entryId(key: .string(n)) { return id }
            state.id = try store.soupTransaction(c, SyncState.soup, keyPath: nil).save(state.object)
            try SyncTables.keepTarget(c, syncId: state.id, target: targetJSON)
            return nil
        }
        if let id = existing { return try runAgain(id, as: state, progress: progress, flag: flag) }
        // Defined only: NEW until tureen_resync or the sync loop runs it.
        guard opts.start else { return SyncResult(state: state.text, error: nil) }
        return try run(state, incremental: false, progress: progress, flag: flag)
    }

    /// $fh.sync's `manage`, called at every start of the app: a name given
    /// again with the sync it names runs that sync as tureen_resync does
    /// (or, with "start": false, leaves it as it is); with anything else it
    /// would silently run what the app no longer asks for.
    private func runAgain(_ id: Int64, as asked: SyncState, progress: ((String) -> Void)?, flag: CancelFlag) throws -> SyncResult {
        let s = try load(String(id))
        let name = asked.name ?? ""
        if s.kind != asked.kind {
            throw TureenError.invalid("a sync named '\(name)' exists as a \(s.kind == .down ? "sync down" : "sync up"); give this one another name, or delete that one with \(store.callNames[.syncDelete])")
        }
        var differs: [String] = []
        if !SyncManager.sameTarget(asked.target, kept: s.target) { differs.append("target") }
        if s.soupName != asked.soupName { differs.append("soup ('\(s.soupName)')") }
        if s.options.json != asked.options.json { differs.append("options (\(s.options.json.text))") }
        if !differs.isEmpty {
            throw TureenError.invalid("a sync named '\(name)' exists with another \(differs.joined(separator: ", ")); change it with \(store.callNames[.syncUpdate]), or give this one another name")
        }
        guard asked.options.start else { return SyncResult(state: s.text, error: nil) }
        return try run(s, incremental: true, progress: progress, flag: flag)
    }

    public func resync(_ idOrName: String, progress: ((String) -> Void)?) throws -> SyncResult {
        try run(try load(idOrName), incremental: true, progress: progress)
    }

    public func status(_ idOrName: String) throws -> String { try load(idOrName).text }

    public func cancel(_ idOrName: String) throws {
        if let f = lock.withLock({ starting[idOrName] }) {
            f.raise()
            return
        }
        let s = try load(idOrName)
        claims.flag(s.id)?.raise()
    }

    public func cleanGhosts(_ idOrName: String) throws -> Int {
        let s = try load(idOrName)
        guard s.kind == .down else { throw TureenError.invalid("clean_ghosts takes a sync down; sync \(s.id) is a sync up") }
        let flag = try claim(s.id, soup: s.soupName)
        defer { release(s.id) }
        // Read again once claimed, as `run` does: the claim may have waited.
        let state = try load(String(s.id))
        let run = SyncRun(store: store, state: state, target: try makeTarget(state.target, cancel: flag), cancel: flag, progress: nil)
        return try run.cleanGhosts()
    }

    /// Runs a sync once it is claimed; `waiting` as for `claim`,
    /// `networkRetries` as for `makeTarget`.
    func run(_ loaded: SyncState, incremental: Bool, progress: ((String) -> Void)?, flag given: CancelFlag? = nil,
             waiting: Bool = true, networkRetries: Int? = nil) throws -> SyncResult {
        let flag: CancelFlag
        do {
            flag = try claim(loaded.id, soup: loaded.soupName, given, waiting: waiting)
        } catch let e as TureenError where SyncRun.isStorageFailure(e) {
            // A store that cannot write is told, as when a run cannot save its start.
            return SyncRun.unstarted(loaded, e, events: events)
        } catch let e as TureenError where e.code == .cancelled {
            // The wait for the soup was cancelled (tureen_sync_cancel, or
            // close): nothing ran, nothing is written. The caller still gets
            // the state, as of a run that was cancelled: a new sync stays
            // defined, NEW, and without it an unnamed one could be found
            // only in the list of syncs.
            return SyncResult(state: ((try? load(String(loaded.id))) ?? loaded).text, error: e)
        }
        defer { release(loaded.id) }
        // Read again once claimed: a run elsewhere may have ended since.
        let state = try load(String(loaded.id))
        let target = try makeTarget(state.target, cancel: flag, networkRetries: networkRetries)
        let run = SyncRun(store: store, state: state, target: target, cancel: flag, progress: progress)
        let result = run.finish(end: { s in try claims.end(s.id, s, closing: serverCalls.closing) }) {
            switch state.kind {
            case .down: try run.down(incremental: incremental)
            case .up: try run.up()
            }
        }
        if let auth = target.credentialRefresh?.refreshedAuth {
            // Not kept: the next run asks the refresher again, nothing worse.
            do { try keepCredentials(auth, syncId: state.id) } catch {
                Log.write(.warning, .sync, "sync \(state.id): the refreshed credentials could not be kept: \(error)")
            }
        }
        // Reached or not: a cancelled run, or one that had nothing to send,
        // says nothing about the server.
        if result.error?.code != .cancelled && (result.error != nil || target.requestCount > 0) {
            lock.withLock { offlineNow = result.error?.code == .network }
        }
        return result
    }

    /// Keeps credentials a session refresher gave, for the sync's next runs
    /// (its "refresh" stays). Only the kept target changes: states show
    /// credentials redacted anyway.
    private func keepCredentials(_ auth: JSONObject, syncId: Int64) throws {
        try store.withWriteTransaction(origin: .sync) { c in
            guard var t = try SyncTables.keptTarget(c, syncId: syncId)?.objectValue else { return }
            // Only what a target's "auth" may hold: a refresher's extra members would make it invalid.
            var a = JSONObject()
            for k in auth["bearer"] != nil ? ["bearer"] : ["user", "password"] { if let v = auth[k] { a[k] = v } }
            if let r = t["auth"]?["refresh"] { a["refresh"] = r }
            t["auth"] = .object(a)
            try SyncTables.keepTarget(c, syncId: syncId, target: .object(t))
        }
    }

    /// Whether sync `id` is running now on this handle.
    func isRunning(_ id: Int64) -> Bool { claims.flag(id) != nil }

    /// Whether sync `id` is running now on any handle or in any process.
    func isRunningAnywhere(_ id: Int64) throws -> Bool {
        if isRunning(id) { return true }
        return try store.withReadTransaction { c in try SyncRunners.isHeld(c, syncId: id) }
    }

    /// Makes sync `id` of `soup` this handle's to run or change until
    /// `release` (SyncClaims.claim); closing the store ends a wait.
    func claim(_ id: Int64, soup: String, _ given: CancelFlag? = nil, waiting: Bool = true) throws -> CancelFlag {
        try claims.claim(id, soup: soup, given, waiting: waiting, closing: serverCalls.closing)
    }

    func release(_ id: Int64) { claims.release(id) }

    /// A sync's state with its whole target. Read in a read-only
    /// transaction, beside a sync that is writing; only a state saved before
    /// secrets were kept apart is written, once, to move them.
    func load(_ idOrName: String) throws -> SyncState {
        guard try store.soupExists(SyncState.soup) else { throw TureenError(.notFound, "no sync '\(idOrName)'") }
        var (state, kept): (SyncState, JSON?) = try store.withReadTransaction { c in
            let states = try store.soupTransaction(c, SyncState.soup, keyPath: "name")
            let id = try Int64(idOrName) ?? states.entryId(key: .string(idOrName))
            guard let i = id, let o = try states.entry(id: i) else { throw TureenError(.notFound, "no sync '\(idOrName)'") }
            let state = try SyncState(o)
            return (state, try SyncTables.keptTarget(c, syncId: state.id))
        }
        if TargetSecrets.needsMoving(state, kept: kept) {
            try store.withWriteTransaction(origin: .sync) { c in try SyncTables.keepTarget(c, syncId: state.id, target: state.target) }
            kept = state.target
        }
        state = claims.shown(state)
        if let t = kept { state.target = t }
        return state
    }

    /// The target `json` describes; `adjust` may change an HTTP target's
    /// settings first (a cached fetch adds its query parameters);
    /// `networkRetries` caps its retries of network errors.
    func makeTarget(_ json: JSON, cancel: CancelFlag, networkRetries: Int? = nil,
                    adjust: ((inout RestConfig) -> Void)? = nil) throws -> SyncTarget {
        // Closing the store stops the target too, whatever flag the call has.
        let stop = CancelFlag(parent: cancel, also: serverCalls.closing)
        var config: RestConfig
        switch try TargetKinds.parse(json) {
        case .callback(let name, let idField, let modifiedField):
            guard let host = callbacks.get(name) else {
                throw TureenError(.notFound, "no callback target '\(name)' is registered on this store handle")
            }
            let target = CallbackTarget(host, idField: idField, modifiedField: modifiedField, cancel: stop)
            target.maxRetries = min(target.maxRetries, networkRetries ?? target.maxRetries)
            return target
        case .http(let c): config = c
        }
        config.networkRetries = networkRetries
        adjust?(&config)
        let rest = try RestTarget(config, cancel: stop, pauses: pauses)
        if let name = config.authRefresh {
            guard let auth = auths.get(name) else {
                throw TureenError(.notFound, "no credential refresher '\(name)' is registered on this store handle")
            }
            rest.session = (auth, name, json)
        }
        var steps = try config.transformers.map { name -> (name: String, transformer: RecordTransformer) in
            guard let t = transformers.get(name) else {
                throw TureenError(.notFound, "no transformer '\(name)' is registered on this store handle")
            }
            return (name, t)
        }
        // Last to encode: the host's transformers see records in clear.
        if let keys = config.encryption {
            steps.append((EncryptionTransformer.stepName, EncryptionTransformer(keys: keys, collection: config.sealedCollection)))
        }
        guard !steps.isEmpty else { return rest }
        let pipeline = TransformPipeline(steps, idField: rest.idField, modifiedField: rest.modifiedField, cancel: stop,
                                         networkRetries: min(config.maxRetries, networkRetries ?? config.maxRetries))
        return TransformingTarget(rest, pipeline)
    }
}
