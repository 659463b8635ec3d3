import TureenStore
import TureenCore

extension SyncManager {
    /// Saves entries as local changes: each write and its flags in one
    /// transaction, a client id stamped on new records. `merge`: an entry
    /// found stored keeps the members not given (SmartSync's StoreCache.save);
    /// otherwise the given entry replaces it whole.
    public func localUpsert(soup: String, entries text: String, idField: String?, merge: Bool = false) throws -> JSONWriter {
        // Before its specs are read: a sync state soup not made yet is still the engine's.
        try store.refuseEngineSoup(soup, "written")
        let idField = idField ?? "id"
        let parsed = try JSONParser.parse(text)
        let isArray = parsed.arrayValue != nil
        let list = parsed.arrayValue ?? [parsed]
        let keyed = try store.indexSpecs(soup).contains { $0.path.hasSameBytes(as: idField) && $0.type != .fullText }
        var applied: [RecordEvent] = []
        // Each entry as its write stored it, as tureen_upsert answers: read
        // back by id afterwards, a record named a million times in a batch
        // that ends with one large write came back a million large times.
        let out = JSONWriter()
        if isArray { out.appendRaw("[") }
        try store.withSoupTransaction(soup, keyPath: keyed ? idField : nil) { tx in
            try SyncTables.keepLocalIdField(tx, idField)
            for (i, v) in list.enumerated() {
                guard var e = v.objectValue else { throw TureenError.invalid("entry \(i): an entry must be a JSON object; nothing was written") }
                var existing: JSONObject?
                if let id = e[EntryText.idKey]?.int64Value {
                    existing = try tx.entry(id: id)
                } else if let key = e[idField], let id = try tx.entryId(key: key) {
                    existing = try tx.entry(id: id)
                }
                if merge, var kept = existing {
                    // A member given as null is set to null, as StoreCache's
                    // extend of the stored record sets it.
                    for m in e.members { kept[m.key] = m.value }
                    e = kept
                }
                e[LocalFlags.local] = .bool(true)
                e[LocalFlags.deleted] = .bool(false)
                LocalFlags.clearError(&e)
                if let old = existing {
                    e[EntryText.idKey] = old[EntryText.idKey]
                    let created = LocalFlags.isSet(old, LocalFlags.created)
                    e[LocalFlags.created] = .bool(created)
                    e[LocalFlags.updated] = .bool(!created)
                    if e[idField] == nil { e[idField] = old[idField] }
                } else {
                    e[EntryText.idKey] = nil
                    e[LocalFlags.created] = .bool(true)
                    e[LocalFlags.updated] = .bool(false)
                    if e[idField] == nil || e[idField] == .null { e[idField] = .string(ClientId.make()) }
                }
                do {
                    try store.requireBlobs(of: .object(e), tx.transaction)
                } catch let err as TureenError {
                    throw TureenError(err.code, "entry \(i): \(err.message); nothing was written")
                }
                if i > 0 { out.appendRaw(",") }
                let entryId = try tx.save(e, into: out)
                applied.append(RecordEvent(recordId: e[idField].flatMap(SoupTransaction.keyText) ?? "", entryId: entryId,
                                           operation: existing == nil ? .create : .update))
            }
        }
        if isArray { out.appendRaw("]") }
        announceLocal(soup, applied)
        return out
    }

    /// Marks entries deleted locally. A record created here is removed at
    /// once only when no create of it was ever sent: one sent (even by a
    /// sync that died before the answer) may be on the server, so it waits,
    /// marked deleted, for sync up to delete it there by its id. An id given
    /// again is passed over: once removed it would fail the call as unknown,
    /// and each repeat read and wrote the whole entry again.
    public func localDelete(soup: String, ids: [Int64]) throws {
        // tureen_local_delete takes no id field: events name records by
        // the one the soup's local upserts were given.
        try markDeleted(soup, idField: nil) { _ in ids }
    }

    /// `localDelete` of the records `idField` (nil: "id") names by these
    /// ids ($fh.sync's doDelete(uid)); an id no entry holds fails the call.
    public func localDelete(soup: String, recordIds: [JSON], idField: String?) throws {
        let idField = idField ?? "id"
        try markDeleted(soup, idField: idField) { tx in
            try zip(recordIds, try tx.entryIds(recordIds: recordIds, idField: idField)).map { key, id in
                guard let id = id else {
                    throw TureenError(.notFound, "soup '\(soup)' has no record whose \(idField) is \(JSONWriter.string(key)); nothing was deleted")
                }
                return id
            }
        }
    }

    /// Marks the entries `resolve` finds, in the transaction it runs in;
    /// events name records by `idField` (nil: see SyncTables.localIdField).
    private func markDeleted(_ soup: String, idField named: String?, _ resolve: (SoupTransaction) throws -> [Int64]) throws {
        var applied: [RecordEvent] = []
        try store.withSoupTransaction(soup, keyPath: nil) { tx in
            let idField = try named ?? SyncTables.localIdField(tx) ?? "id"
            var seen = Set<Int64>()
            for id in try resolve(tx) where seen.insert(id).inserted {
                guard var e = try tx.entry(id: id) else {
                    throw TureenError(.notFound, "soup '\(soup)' has no entry \(id); nothing was deleted")
                }
                applied.append(RecordEvent(recordId: e[idField].flatMap(SoupTransaction.keyText) ?? "", entryId: id, operation: .delete))
                if LocalFlags.isSet(e, LocalFlags.created), try !SyncTables.createWasSent(tx, id) {
                    try tx.delete(id: id)
                    continue
                }
                e[LocalFlags.local] = .bool(true)
                e[LocalFlags.deleted] = .bool(true)
                try tx.save(e)
            }
        }
        announceLocal(soup, applied)
    }

    /// local_update_applied for each committed local change, and
    /// offline_update too while the server is out of reach.
    private func announceLocal(_ soup: String, _ records: [RecordEvent]) {
        let e = events
        for code in [SyncEventCode.localUpdateApplied, .offlineUpdate] where e.wants(code) {
            if code == .offlineUpdate && !isOffline { continue }
            for r in records {
                e.emit(code, [("soup", .string(soup)), ("recordId", .string(r.recordId)), ("entryId", .int(r.entryId)),
                              ("operation", .string(r.operation.rawValue))])
            }
        }
    }

    /// The soup's conflicts as a JSON array.
    public func conflicts(soup: String) throws -> String {
        guard try store.soupExists(soup) else { throw TureenError(.notFound, "no soup named '\(soup)'") }
        return try store.withWriteTransaction { c in
            try SyncTables.create(c)
            let list = try SyncTables.conflicts(try store.soupTransaction(c, soup, keyPath: nil))
            return JSON.array(try list.map { $0.json(ignoring: try modifiedField(c, syncId: $0.syncId)) }).text
        }
    }

    /// The modification field of a sync's target, which diffs leave out.
    private func modifiedField(_ c: StoreTransaction, syncId: Int64) throws -> String {
        let states = try store.soupTransaction(c, SyncState.soup, keyPath: nil)
        return TargetKinds.modifiedField(of: try states.entry(id: syncId)?["target"])
    }

    public func resolveConflict(soup: String, entryId: Int64, resolution: ConflictResolution) throws {
        let mergedRecord = resolution.mergedRecord
        try store.withWriteTransaction { c in
            try SyncTables.create(c)
            let tx = try store.soupTransaction(c, soup, keyPath: nil)
            guard let k = try SyncTables.conflicts(tx, entryId: entryId).first else {
                throw TureenError(.notFound, "soup '\(soup)' has no conflict for entry \(entryId)")
            }
            let current = try tx.entry(id: entryId)
            // The server's copy becomes the base: the next sync up is made
            // against it, so its precondition holds unless the server moves again.
            // Resolving "theirs" with a copy whose references the store
            // refuses throws below, and the transaction takes this back;
            // "yours" and "merged" keep it, refused references and all:
            // without it their change would meet the same conflict again.
            try SyncTables.setBase(tx, entryId, k.theirs)
            // Sync up brought the server's copy without its blobs: those not
            // here are awaited through the conflict's sync, so neither the
            // entry nor a rollback to the base points at bytes never fetched.
            // References the store refuses only stop resolving "theirs".
            if let t = k.theirs {
                do {
                    try store.awaitBlobs(of: .object(t), owner: k.syncId, c)
                } catch let e as TureenError where e.code == .invalid && !resolution.isTheirs {
                    // "yours" and "merged" replace the server's copy here.
                }
            }
            // A merged record is the app's write: the blobs it refers to
            // must be here or awaited, as for an upsert.
            if let m = mergedRecord { try store.requireBlobs(of: .object(m), c) }
            switch resolution {
            case .theirs:
                if let t = k.theirs {
                    try tx.save(LocalFlags.entry(from: t, entryId: entryId))
                } else if current != nil {
                    try tx.delete(id: entryId)
                }
            case .yours, .merged:
                var e = mergedRecord ?? current ?? JSONObject()
                e[EntryText.idKey] = .int(entryId)
                e[LocalFlags.local] = .bool(true)
                LocalFlags.clearError(&e)
                let deletedHere = mergedRecord == nil && (current.map { LocalFlags.isSet($0, LocalFlags.deleted) } ?? false)
                e[LocalFlags.deleted] = .bool(deletedHere)
                e[LocalFlags.created] = .bool(k.theirs == nil && !deletedHere)
                e[LocalFlags.updated] = .bool(k.theirs != nil && !deletedHere)
                if deletedHere && k.theirs == nil {
                    try tx.delete(id: entryId)  // both sides deleted it
                } else {
                    try tx.save(e)
                }
            }
            // The conflict saw past every copy sent before it: none is the
            // server's now. Kept, they would make "yours" over a deletion
            // (a create again, under a random id) pass for a lost create of
            // this store's, and the deletion would stand.
            try SyncTables.forgetSent(tx, entryId)
            try SyncTables.removeConflict(tx, entryId: entryId)
        }
    }
}
