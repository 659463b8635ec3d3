import TureenStore
import TureenCore

/// Managed syncs ($fh.sync's `manage`): defined once, changed, listed and
/// deleted by name or id, run by the app or by the sync loop.
extension SyncManager {
    /// Every sync of the store with its state, credentials redacted, in id order.
    public func list() throws -> String {
        JSON.array(try allStates().map { .object($0.object) }).text
    }

    /// Every sync state, with redacted targets (what states show).
    func allStates() throws -> [SyncState] {
        guard try store.soupExists(SyncState.soup) else { return [] }
        return try store.withReadTransaction { c in
            try store.soupTransaction(c, SyncState.soup, keyPath: nil).keys().map { claims.shown(try SyncState($0.entry)) }
        }
    }

    /// Changes a sync's target (credentials, query parameters, place) and
    /// options. A target in another place (another collection or URL)
    /// starts the sync from scratch; the same place with new credentials
    /// keeps where it was. Returns the new state.
    public func update(_ idOrName: String, target: TargetSpec?, options: SyncOptions?) throws -> String {
        try withClaimed(idOrName) { claimed in try update(claimed, target: target, options: options) }
    }

    private func update(_ claimed: SyncState, target spec: TargetSpec?, options: SyncOptions?) throws -> String {
        var s = claimed
        if let target = spec?.json {
            _ = try makeTarget(target, cancel: CancelFlag())
            if SyncManager.place(of: target) != SyncManager.place(of: s.target) { s.startOver() }
            s.target = target
        }
        if var opts = options {
            try opts.check(for: s.kind)
            guard opts.start else { throw TureenError.invalid("\"start\" belongs to \(store.callNames[.syncDown]) and \(store.callNames[.syncUp])") }
            if opts.name == nil { opts.name = s.name }
            s.options = opts
            s.name = opts.name
        }
        let state = s
        try store.withWriteTransaction(origin: .sync) { c in
            let states = try store.soupTransaction(c, SyncState.soup, keyPath: "name")
            if let n = state.name, let other = try states.entryId(key: .string(n)), other != state.id {
                throw TureenError.invalid("a sync named '\(n)' exists")
            }
            _ = try states.save(state.object)
            try SyncTables.keepTarget(c, syncId: state.id, target: state.target)
        }
        return state.text
    }

    /// Deletes a sync's state and kept credentials (not its soup's records,
    /// nor their local changes). A running sync cannot be deleted.
    public func delete(_ idOrName: String) throws {
        try withClaimed(idOrName) { s in
            try store.withWriteTransaction(origin: .sync) { c in
                try store.soupTransaction(c, SyncState.soup, keyPath: nil).delete(id: s.id)
                try SyncTables.forgetTarget(c, syncId: s.id)
            }
        }
    }

    /// Runs `body` with a sync's state while no run of it can start: the
    /// state is read once the sync is claimed, so a run that ended just
    /// before is not overwritten with what the sync held before it.
    func withClaimed<T>(_ idOrName: String, _ body: (SyncState) throws -> T) throws -> T {
        let first = try load(idOrName)
        let id = first.id
        _ = try claim(id, soup: first.soupName)
        defer { release(id) }
        return try body(try load(String(id)))
    }

    /// Whether `given` is the target a sync keeps (`kept`, secrets and all).
    /// Credentials a refresher gave since replaced those of a target with a
    /// "refresh": only that name tells such targets apart.
    static func sameTarget(_ given: JSON, kept: JSON) -> Bool {
        func asDefined(_ t: JSON) -> JSON {
            guard var o = t.objectValue, let refresh = o["auth"]?["refresh"] else { return t }
            o["auth"] = .object(JSONObject([("refresh", refresh)]))
            return .object(o)
        }
        return asDefined(given) == asDefined(kept)
    }

    /// Where a target reads and writes: two targets in the same place differ
    /// only in credentials, headers or options.
    static func place(of target: JSON) -> String {
        let t = target.objectValue ?? JSONObject()
        let parts = ["type", "url", "server", "bucket", "collection", "name"].map { t[$0]?.text ?? "" }
        return parts.joined(separator: "\u{1}")
    }
}

extension SyncManager {
    /// RhoConnect's database_full_reset_and_logout: stops the sync loop,
    /// then in one commit empties every soup a sync reads or writes and
    /// removes every sync state with its credentials, local changes and
    /// conflicts included. Refused while a sync runs.
    public func reset() throws {
        stopLoop()
        let states = try allStates()
        for s in states where try isRunningAnywhere(s.id) {
            throw TureenError.misuse("sync \(s.id) is running now, on this handle or another; cancel it first")
        }
        var soups: [String] = []
        for s in states where !soups.contains(s.soupName) {
            if try store.soupExists(s.soupName) { soups.append(s.soupName) }
        }
        try store.withWriteTransaction(origin: .sync) { c in
            for soup in soups { try store.clearSoup(c, soup) }
            let tx = try store.soupTransaction(c, SyncState.soup, keyPath: nil)
            for s in states {
                try tx.delete(id: s.id)
                try SyncTables.forgetTarget(c, syncId: s.id)
            }
        }
    }
}

extension SyncManager {
    /// After a server lost its data (a flushed or restored collection):
    /// marks every record of the sync down's soup as created here, so the
    /// next sync up publishes them all again (records deleted here are
    /// simply removed: the server has none), and starts the sync down from
    /// scratch. Returns how many records will be published.
    public func republish(_ idOrName: String) throws -> Int {
        try withClaimed(idOrName) { s in
            guard s.kind == .down else { throw TureenError.invalid("republish takes a sync down; sync \(s.id) is a sync up") }
            var reset = s
            reset.startOver()
            return try republish(s.soupName, reset)
        }
    }

    private func republish(_ soup: String, _ reset: SyncState) throws -> Int {
        try store.withWriteTransaction(origin: .sync) { c in
            try SyncTables.create(c)
            let tx = try store.soupTransaction(c, soup, keyPath: nil)
            var published = 0
            for (entryId, _, entry) in try tx.keys() {
                if LocalFlags.isSet(entry, LocalFlags.deleted) {
                    try tx.delete(id: entryId)
                    continue
                }
                var e = entry
                e[LocalFlags.local] = .bool(true)
                e[LocalFlags.created] = .bool(true)
                e[LocalFlags.updated] = .bool(false)
                e[LocalFlags.deleted] = .bool(false)
                LocalFlags.clearError(&e)
                try SyncTables.setBase(tx, entryId, nil)
                try SyncTables.removeConflict(tx, entryId: entryId)
                try tx.save(e)
                published += 1
            }
            _ = try store.soupTransaction(c, SyncState.soup, keyPath: nil).save(reset.object)
            return published
        }
    }
}
