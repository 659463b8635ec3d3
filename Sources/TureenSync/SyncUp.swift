import TureenStore

/// One local change on its way, with what it was made from.
private struct Pending {
    var entryId: Int64
    var stamp: Int64          // _soupLastModifiedDate when read: a later edit must not be marked clean
    var entry: JSONObject
    var change: Change
    var base: JSONObject?
}

/// How a change ended.
private enum Settled {
    case synced(JSONObject?)
    case deleted
    case conflict(JSONObject?)
    case failed(TureenError)
}

extension SyncRun {
    /// Sends every local change, a batch at a time; each batch's results
    /// commit in one transaction with the state.
    func up() throws {
        let pending = try collectChanges()
        state.totalSize = pending.count
        // Nothing to send costs the server nothing (the sync loop runs sync
        // up after every local write).
        guard !pending.isEmpty else { return }
        if let rest = target as? RestTarget {
            try rest.ensureContainers()
            try rest.readServerLimits()
        }
        var start = 0
        while start < pending.count {
            try cancel.check()
            let part = Array(pending[start..<min(start + target.batchSize, pending.count)])
            try uploadBlobs(part.map { $0.change })
            let outcomes = try send(part.map { $0.change })
            var settled: [Settled] = []
            for (p, o) in zip(part, outcomes) { settled.append(try settle(p, o, depth: 0)) }
            let before = state
            do {
                try store.withWriteTransaction(origin: .sync) { c in
                    let tx = try store.soupTransaction(c, soup, keyPath: target.idField)
                    for (p, s) in zip(part, settled) { try commit(p, s, tx) }
                    try saveState(c)
                }
            } catch {
                state = before  // nothing of the batch was recorded
                throw error
            }
            announce(zip(part, settled))
            state.done += part.count
            start += part.count
            Log.write(.info, .sync, "sync \(state.id) up: a batch of \(part.count) change(s) committed; \(state.done) of \(pending.count) done")
            report()
        }
    }

    /// Tells sync listeners how each change of a committed batch ended.
    private func announce<S: Sequence>(_ results: S) where S.Element == (Pending, Settled) {
        var applied: [RecordEvent] = [], collided: [RecordEvent] = [], failed: [(RecordEvent, TureenError)] = []
        for (p, s) in results {
            let r = RecordEvent(recordId: p.change.id, entryId: p.entryId, operation: RecordOperation(p.change.kind))
            switch s {
            case .synced, .deleted: applied.append(r)
            case .conflict: collided.append(r)
            case .failed(let e): failed.append((r, e))
            }
        }
        announce(.remoteUpdateApplied, applied)
        announce(.collisionDetected, collided)
        for (r, e) in failed {
            announce(.remoteUpdateFailed, [r]) { _ in
                [("error", .string(e.message)), ("httpStatus", e.httpStatus.map { .int(Int64($0)) } ?? .null)]
            }
        }
    }

    private var ignoredFields: Set<String> { [target.modifiedField] }

    /// Reads the local changes. A new record without an id gets one here,
    /// committed before anything is sent, so a retry after a crash sends
    /// the same id and cannot create a second record. Every create about to
    /// be sent is recorded as sent in the same commit: from then on the
    /// server may have it, so deleting it locally must delete it there too.
    private func collectChanges() throws -> [Pending] {
        try store.withWriteTransaction(origin: .sync) { c in
            let tx = try store.soupTransaction(c, soup, keyPath: target.idField)
            try SyncTables.watch(tx)
            var out: [Pending] = []
            var dropped: [Int64] = []
            try tx.entries(flagged: LocalFlags.local) { e in
                var entry = e
                guard let entryId = entry[EntryText.idKey]?.int64Value else { return }
                let created = LocalFlags.isSet(entry, LocalFlags.created)
                let deleted = LocalFlags.isSet(entry, LocalFlags.deleted)
                // Created and deleted before any create was sent: the server never had it.
                if created && deleted, try !SyncTables.createWasSent(tx, entryId) { dropped.append(entryId); return }
                if entry[target.idField].flatMap(SoupTransaction.keyText) == nil {
                    guard created else {
                        let why = TureenError.invalid("the record has no \"\(target.idField)\" and is not marked created")
                        state.fail(entryId, recordId: nil, operation: deleted ? .delete : .update, why)
                        entry[LocalFlags.lastError] = .string(why.message)
                        try tx.save(entry)
                        return
                    }
                    entry[target.idField] = .string(ClientId.make())
                    entry[EntryText.modifiedKey] = nil
                    try tx.save(entry)
                    entry = try tx.entry(id: entryId) ?? entry
                }
                guard let id = entry[target.idField].flatMap(SoupTransaction.keyText) else { return }
                let base = try SyncTables.base(tx, entryId)
                let kind: Change.Kind = deleted ? .delete : (created && base == nil ? .create : .update)
                // Sent and refused maxAttempts times: it waits for the app
                // (tureen_sync_error_resolve) instead of being sent again.
                if LocalFlags.attemptCount(entry) >= state.options.maxAttempts {
                    let why = TureenError(.http, "not sent: \(LocalFlags.attemptCount(entry)) attempt(s) failed (maxAttempts \(state.options.maxAttempts)); resolve it with tureen_sync_error_resolve. Last error: \(entry[LocalFlags.lastError]?.stringValue ?? "none")",
                                          httpStatus: entry[LocalFlags.lastErrorStatus]?.int64Value.map { Int($0) })
                    state.fail(entryId, recordId: id, operation: RecordOperation(kind), why)
                    return
                }
                if kind == .create { try SyncTables.markCreateSent(tx, entryId) }
                let fields = LocalFlags.serverFields(entry, idField: target.idField, modifiedField: target.modifiedField,
                                                     fieldlist: state.options.fieldlist)
                let ifMatch = state.options.mergeMode == .overwrite ? nil : base.flatMap { target.version(of: $0) }
                let change = Change(kind: kind, id: id, record: fields, partial: kind == .update && state.options.fieldlist != nil,
                                    ifMatch: ifMatch, base: base)
                out.append(Pending(entryId: entryId, stamp: entry[EntryText.modifiedKey]?.int64Value ?? 0,
                                   entry: entry, change: change, base: base))
            }
            for e in dropped { try tx.delete(id: e) }
            return out
        }
    }

    /// Follows an outcome to its end: a precondition that failed is looked
    /// into (a retried change the server already applied counts as done),
    /// then merged, overwritten or left as a conflict by the merge mode.
    private func settle(_ p: Pending, _ outcome: PushOutcome, depth: Int) throws -> Settled {
        let mode = state.options.mergeMode
        func again(_ change: Change) throws -> Settled {
            guard depth < 3 else { return .failed(TureenError(.conflict, "the server copy kept changing during the sync")) }
            var next = p
            next.change = change
            return try settle(next, try sendOne(change), depth: depth + 1)
        }
        // Publishing yours again where the server deleted the record: what
        // OVERWRITE and MERGE_ACCEPT_YOURS promise, and a create's retry.
        let republishes = mode == .overwrite || mode == .mergeAcceptYours
        func republish() throws -> Settled {
            var c = p.change
            c.kind = .create
            c.ifMatch = nil
            c.record = LocalFlags.serverFields(p.entry, idField: target.idField, modifiedField: target.modifiedField,
                                               fieldlist: state.options.fieldlist)
            c.partial = false
            return try again(c)
        }
        switch outcome {
        case .applied(let copy):
            return p.change.kind == .delete ? .deleted : .synced(copy)
        case .rejected(let e):
            return .failed(e)
        case .notFound:
            switch p.change.kind {
            case .delete: return .deleted
            case .create: return .failed(TureenError(.http, "create '\(p.change.id)': the server answered 404", httpStatus: 404))
            case .update: return republishes ? try republish() : .conflict(nil)
            }
        case .conflict(let copy, let known):
            let theirs = known ? copy : try target.get(id: p.change.id)
            guard let t = theirs else {
                // Gone from the server meanwhile.
                switch p.change.kind {
                case .delete: return .deleted
                case .create, .update:
                    return republishes || p.change.kind == .create ? try republish() : .conflict(nil)
                }
            }
            if p.change.kind != .delete && sameFields(p.change.record, t) {
                return .synced(t)  // this change already reached the server
            }
            let yours = LocalFlags.serverFields(p.entry, idField: target.idField, modifiedField: target.modifiedField, fieldlist: nil)
            let changes = Conflict.changes(base: p.base, theirs: t, yours: p.change.kind == .delete ? nil : yours, ignoring: ignoredFields)
            let go: Bool
            switch mode {
            case .overwrite, .mergeAcceptYours: go = true
            case .leaveIfChanged: go = false
            case .mergeFailIfChanged: go = changes.remote.isEmpty
            case .mergeFailIfConflict: go = changes.conflicting.isEmpty
            }
            guard go else { return .conflict(t) }
            var c = p.change
            c.ifMatch = mode == .overwrite ? nil : target.version(of: t)
            c.base = t
            if c.kind == .create { c.kind = .update }
            if c.kind != .delete && mode != .overwrite {
                c.record = Conflict.merged(base: p.base, theirs: t, yours: yours, ignoring: ignoredFields)
                c.record[target.modifiedField] = nil
                c.partial = false
            }
            var next = p
            next.base = t
            next.change = c
            guard depth < 3 else { return .failed(TureenError(.conflict, "the server copy kept changing during the sync")) }
            return try settle(next, try sendOne(c), depth: depth + 1)
        }
    }

    /// Sends changes. An update or delete made against a base that carries
    /// no precondition (a REST target without "concurrency", or a base
    /// without the version the target sends), in a mode that must not
    /// overwrite what changed on the server, is checked by reading first, as
    /// SmartSync does: when the server's copy moved away from the base (or is
    /// gone), the change is not sent and the copy read stands for the answer
    /// a failed precondition would have brought, so every merge mode acts as
    /// it does on Kinto. A write the server takes between that read and this
    /// one is not seen: only a precondition closes that window.
    private func send(_ changes: [Change]) throws -> [PushOutcome] {
        var known: [PushOutcome?] = []
        var unsent: [Change] = []
        for c in changes {
            if readsFirst(c) {
                let theirs = try target.get(id: c.id)
                if moved(from: c.base, to: theirs) {
                    known.append(.conflict(theirs, known: true))
                    continue
                }
            }
            known.append(nil)
            unsent.append(c)
        }
        var answers = try (unsent.isEmpty ? [] : target.push(unsent)).makeIterator()
        return known.map { $0 ?? answers.next() ?? .rejected(TureenError(.internal, "the target answered fewer changes than it was sent")) }
    }

    private func sendOne(_ change: Change) throws -> PushOutcome {
        try send([change])[0]
    }

    /// Callback hosts receive the base with each change and compare it
    /// themselves; a REST server only does if it is sent a precondition.
    private func readsFirst(_ c: Change) -> Bool {
        state.options.mergeMode != .overwrite && c.kind != .create && c.base != nil && c.ifMatch == nil && target is RestTarget
    }

    /// Whether the server's copy is no longer the base: its modification
    /// stamp differs, or it is gone. A base without a stamp (kept from a
    /// write the server answered without the record) is compared field by field.
    private func moved(from base: JSONObject?, to theirs: JSONObject?) -> Bool {
        guard let b = base, let t = theirs else { return true }
        if let stamp = b[target.modifiedField] { return t[target.modifiedField] != stamp }
        return !Conflict.changes(base: b, theirs: t, yours: b, ignoring: ignoredFields).remote.isEmpty
    }

    private func sameFields(_ sent: JSONObject, _ theirs: JSONObject) -> Bool {
        for m in sent.members where m.key != target.modifiedField {
            if theirs[m.key] != m.value { return false }
        }
        return true
    }

    private func commit(_ p: Pending, _ s: Settled, _ tx: SoupTransaction) throws {
        let current = try tx.entry(id: p.entryId)
        // Edited again while this batch was out: keep the edit as a change.
        let editedSince = current.map { $0[EntryText.modifiedKey]?.int64Value != p.stamp } ?? false
        switch s {
        case .synced(let copy):
            try SyncTables.forgetCreateSent(tx, p.entryId)
            var base = p.change.record
            if let copy = copy { base = copy }
            try SyncTables.setBase(tx, p.entryId, base)
            try SyncTables.removeConflict(tx, entryId: p.entryId)
            if var e = current, !editedSince {
                if let copy = copy { for m in copy.members { e[m.key] = m.value } }
                LocalFlags.markClean(&e)
                try tx.save(e)
            } else if var e = current, LocalFlags.isSet(e, LocalFlags.created) {
                // It exists on the server now: later edits are updates.
                e[LocalFlags.created] = .bool(false)
                e[LocalFlags.updated] = .bool(true)
                try tx.save(e)
            }
            state.synced += 1
        case .deleted:
            try SyncTables.forgetCreateSent(tx, p.entryId)
            try SyncTables.setBase(tx, p.entryId, nil)
            try SyncTables.removeConflict(tx, entryId: p.entryId)
            if current != nil { try tx.delete(id: p.entryId) }
            state.synced += 1
        case .conflict(let theirs):
            try SyncTables.addConflict(tx, Conflict(entryId: p.entryId, recordId: p.change.id, syncId: state.id,
                                                   base: p.base, theirs: theirs,
                                                   yours: p.change.kind == .delete ? nil : (current ?? p.entry)))
            state.conflictIds.append(p.entryId)
        case .failed(let e):
            if var entry = current {
                entry[LocalFlags.lastError] = .string(e.message)
                entry[LocalFlags.lastErrorStatus] = e.httpStatus.map { .int(Int64($0)) } ?? .null
                entry[LocalFlags.lastErrorOperation] = .string(RecordOperation(p.change.kind).rawValue)
                entry[LocalFlags.attempts] = .int(Int64(LocalFlags.attemptCount(entry) + 1))
                entry[EntryText.modifiedKey] = nil
                try tx.save(entry)
            }
            state.fail(p.entryId, recordId: p.change.id, operation: RecordOperation(p.change.kind), e)
        }
    }
}
