import TureenStore
import TureenCore

extension SyncRun {
    /// Sends every local change, a batch at a time, or several batches at
    /// once over the target's "upload_connections"; each batch's results
    /// commit in one transaction with the state, in the batches' order.
    func up() throws {
        let pending = try collectChanges()
        // Ids given and creates marked sent are committed; nothing has gone.
        Fault.point("sync.up.collected")
        state.totalSize = pending.count
        // Nothing to send costs the server nothing (the sync loop runs sync
        // up after every local write).
        guard !pending.isEmpty else { return }
        let arrivedBefore = target.mayHaveArrivedCount
        do {
            try send(pending)
        } catch {
            // No request reached the server (offline): the copies marked
            // sent above were not, and the next run sends them as if never tried.
            if let before = arrivedBefore, target.mayHaveArrivedCount == before { forgetNeverSent(pending) }
            throw error
        }
    }

    /// The copies collectChanges marked sent in this run (those of earlier
    /// runs may have landed: they stay).
    private func forgetNeverSent(_ pending: [Pending]) {
        do {
            try store.withWriteTransaction(origin: .sync) { c in
                let tx = try store.soupTransaction(c, soup, keyPath: target.idField)
                for p in pending where try tx.entry(id: p.entryId) != nil {
                    try SyncTables.forgetSent(tx, p.entryId)
                    for copy in p.sentBefore { try SyncTables.markSent(tx, p.entryId, copy) }
                }
            }
        } catch {
            Log.write(.warning, .sync, "sync \(state.id) up: \(error); changes never sent count as possibly sent")
        }
    }

    private func send(_ pending: [Pending]) throws {
        try target.containers?.ensure()
        try target.readServerLimits()
        var batches: [[Pending]] = []
        var start = 0
        while start < pending.count {
            let end = min(start + target.batchSize, pending.count)
            batches.append(Array(pending[start..<end]))
            start = end
        }
        let parallel = target.parallelUploads
        let connections = min(parallel?.uploadConnections ?? 1, batches.count)
        if let parallel, connections > 1 {
            try upInParallel(batches, total: pending.count, parallel, connections: connections)
            return
        }
        let pusher = ChangePusher(target: target, mergeMode: state.options.mergeMode, fieldlist: state.options.fieldlist)
        for part in batches {
            try cancel.check()
            let (ready, heldBack) = try readied(part)
            try record(heldBack, total: pending.count)
            if !ready.isEmpty { try record(ready, try pusher.push(ready), total: pending.count) }
        }
    }

    /// A batch with its blobs on the server: the changes to send, and
    /// those that cannot go (a blob neither here nor there), each with its
    /// failure, for the caller to record in the batch's turn.
    private typealias Readied = (ready: [Pending], heldBack: [(Pending, Settled)])

    /// Puts the batch's blobs on the server; see Readied.
    private func readied(_ part: [Pending]) throws -> Readied {
        let refused = try uploadBlobs(part.map { $0.change })
        guard !refused.isEmpty else { return (part, []) }
        return (part.indices.filter { refused[$0] == nil }.map { part[$0] },
                part.indices.compactMap { i in refused[i].map { (part[i], Settled.failed($0)) } })
    }

    /// Records the changes held back from a batch, if any.
    private func record(_ heldBack: [(Pending, Settled)], total: Int) throws {
        guard !heldBack.isEmpty else { return }
        try record(heldBack.map { $0.0 }, heldBack.map { $0.1 }, total: total)
    }

    /// Several batches on the wire at once, each over a connection of its
    /// own; they still commit on this thread, in order, with the state, so
    /// what a crash or a cancel can leave is what it leaves in a serial
    /// sync: changes sent but not recorded, sent again by the next run and
    /// recognised there (a create by its client id and If-None-Match, an
    /// update by the server's copy matching it). The batches already
    /// answered when one's turn comes commit with it in one transaction
    /// (see answeredRun): the commits are this thread's work, which more
    /// connections do not share, so when it falls behind (its CPU busy)
    /// what waits commits at once, the state saved and pages written
    /// once. A batch waits while one in flight holds any of its
    /// records, so a record's changes reach the server in order. The
    /// changes held back from a batch (see readied) are recorded in its
    /// turn, just before its answers, as a serial sync records them; a
    /// batch with nothing left to send is not submitted. When a batch
    /// fails the sync, those already answered after it still commit.
    private func upInParallel(_ batches: [[Pending]], total: Int, _ parallel: ParallelUploads, connections: Int) throws {
        var batches = batches  // less the changes whose blobs cannot go (see readied)
        var heldBack: [Int: [(Pending, Settled)]] = [:]  // by batch, recorded in its turn
        let options = state.options
        let pool = try UploadPool(try (0..<connections).map { _ in
            ChangePusher(target: try parallel.extraConnection(), mergeMode: options.mergeMode, fieldlist: options.fieldlist)
        })
        defer { pool.close() }
        // Answered batches wait for the ones before them: bounded, so a slow
        // batch cannot make the answers behind it pile up in memory.
        let window = 2 * connections
        var held: [Set<ExactString>] = []  // the record ids of batches next..<sent
        var sent = 0, next = 0
        do {
            while next < batches.count {
                while sent < batches.count && sent - next < window {
                    let ids = Set(batches[sent].map { ExactString($0.change.id) })
                    if held.contains(where: { !$0.isDisjoint(with: ids) }) { break }
                    try cancel.check()
                    let r = try readied(batches[sent])
                    batches[sent] = r.ready
                    if !r.heldBack.isEmpty { heldBack[sent] = r.heldBack }
                    if !r.ready.isEmpty { pool.submit(sent, r.ready) }
                    held.append(ids)
                    sent += 1
                }
                let run = answeredRun(from: next, upTo: sent, batches, &heldBack, pool)
                if !run.parts.isEmpty { try record(run.parts, total: total) }
                held.removeFirst(run.count)
                next += run.count
                if let failure = run.failure { throw failure }
            }
        } catch {
            target.abandon()  // the batches still on the wire end at once
            pool.close()
            // Batch `next` is among them when the failure was not its own
            // (a blob of a later batch that would not go up): what was
            // taken from the pool or the held-back list is not seen again.
            if !((error as? TureenError).map(SyncRun.isStorageFailure) ?? false) {
                for j in next..<sent {
                    do {
                        try record(heldBack.removeValue(forKey: j) ?? [], total: total)
                        guard case .success(let settled)? = pool.finished(j) else { continue }
                        try record(batches[j], settled, total: total)
                    } catch { break }
                }
            }
            throw error
        }
    }

    /// What answeredRun hands the commit: the outcomes of consecutive
    /// batches, each batch's changes held back first, then its answers.
    private typealias Outcomes = [(part: [Pending], settled: [Settled])]

    /// Batch `first`'s outcomes (waiting for its answer) and those of the
    /// batches after it, before `end`, whose answers are already in, for
    /// one commit; `count` batches are taken from `heldBack` and the pool.
    /// A batch whose push failed ends the run: its held-back changes still
    /// commit with it, the failure comes back, and the batches after it
    /// stay in the pool for the caller's failure path to commit.
    private func answeredRun(from first: Int, upTo end: Int, _ batches: [[Pending]],
                             _ heldBack: inout [Int: [(Pending, Settled)]],
                             _ pool: UploadPool) -> (parts: Outcomes, count: Int, failure: Error?) {
        var parts: Outcomes = []
        var j = first
        while j < end {
            var outcome: UploadPool.Outcome?
            if !batches[j].isEmpty {
                outcome = j == first ? pool.outcome(j) : pool.finished(j)
                // A later batch not answered yet waits for its own turn.
                if outcome == nil && j > first { break }
            }
            if let back = heldBack.removeValue(forKey: j) { parts.append((back.map { $0.0 }, back.map { $0.1 })) }
            if !batches[j].isEmpty {
                switch outcome {
                case .success(let settled)?: parts.append((batches[j], settled))
                case .failure(let e)?: return (parts, j - first + 1, e)
                case nil: return (parts, 1, TureenError(.internal, "a batch of sync up ended without an answer"))
                }
            }
            j += 1
        }
        return (parts, j - first, nil)
    }

    /// Commits one batch's outcomes with the state, then announces them.
    private func record(_ part: [Pending], _ settled: [Settled], total: Int) throws {
        try record([(part, settled)], total: total)
    }

    /// Commits the outcomes of consecutive batches in one transaction with
    /// the state, then announces and reports each batch's, in order, with
    /// the counts as they stood after it (a report per batch, as when each
    /// committed alone).
    private func record(_ parts: Outcomes, total: Int) throws {
        let before = state
        var reached: [SyncState] = []  // after each batch but the last
        do {
            // The batches' outcomes are in (the server's answers, or why a change
            // was held back); none is recorded here yet.
            try Fault.point("sync.up.after_answer_before_commit", failing: .io)
            try store.withWriteTransaction(origin: .sync) { c in
                let tx = try store.soupTransaction(c, soup, keyPath: target.idField)
                for (n, (part, settled)) in parts.enumerated() {
                    for (p, s) in zip(part, settled) { try commit(p, s, tx) }
                    if n < parts.count - 1 { reached.append(state) }
                }
                try saveState(c)
            }
        } catch {
            state = before  // nothing of the batches was recorded
            throw error
        }
        let committed = state
        var done = before.done
        for (n, (part, settled)) in parts.enumerated() {
            if n < reached.count {
                state = reached[n]
                (state.id, state.requests) = (committed.id, committed.requests)
            } else {
                state = committed
            }
            done += part.count
            state.done = done
            announce(zip(part, settled))
            Log.write(.info, .sync, "sync \(state.id) up: a batch of \(part.count) change(s) committed; \(state.done) of \(total) done")
            report()
        }
    }

    /// Tells sync listeners how each change of a committed batch ended.
    private func announce<S: Sequence>(_ results: S) where S.Element == (Pending, Settled) {
        var applied: [RecordEvent] = [], collided: [RecordEvent] = [], failed: [(RecordEvent, TureenError)] = []
        var received: [RecordEvent] = []
        for (p, s) in results {
            let r = RecordEvent(recordId: p.change.id, entryId: p.entryId, operation: RecordOperation(p.change.kind))
            switch s {
            case .synced, .deleted: applied.append(r)
            case .superseded(let theirs):
                // The create was applied; what the server did after it came here.
                applied.append(r)
                received.append(RecordEvent(recordId: p.change.id, entryId: p.entryId, operation: theirs == nil ? .delete : .update))
            case .conflict: collided.append(r)
            case .failed(let e): failed.append((r, e))
            }
        }
        announce(.remoteUpdateApplied, applied)
        announce(.recordDeltaReceived, received)
        announce(.collisionDetected, collided)
        for (r, e) in failed {
            announce(.remoteUpdateFailed, [r]) { _ in
                [("error", .string(e.message)), ("httpStatus", e.httpStatus.map { .int(Int64($0)) } ?? .null)]
            }
        }
    }

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
                    let why = TureenError(.http, "not sent: \(LocalFlags.attemptCount(entry)) attempt(s) failed (maxAttempts \(state.options.maxAttempts)); resolve it with \(store.callNames[.syncErrorResolve]). Last error: \(entry[LocalFlags.lastError]?.stringValue ?? "none")",
                                          httpStatus: entry[LocalFlags.lastErrorStatus]?.int64Value.map { Int($0) })
                    state.fail(entryId, recordId: id, operation: RecordOperation(kind), why)
                    return
                }
                if kind == .create { try SyncTables.markCreateSent(tx, entryId) }
                let fields = LocalFlags.serverFields(entry, idField: target.idField, modifiedField: target.modifiedField,
                                                     fieldlist: state.options.fieldlist)
                let sentBefore = try SyncTables.sentCopies(tx, entryId)
                // A whole copy only: the server's copy after a partial
                // update holds fields this one lacks.
                if kind == .delete, !sentBefore.contains(SyncTables.sentDelete) {
                    try SyncTables.markSent(tx, entryId, SyncTables.sentDelete)
                } else if kind != .delete && state.options.fieldlist == nil && !sentBefore.contains(fields) {
                    try SyncTables.markSent(tx, entryId, fields)
                }
                let change = Change(kind: kind, id: id, record: fields, partial: kind == .update && state.options.fieldlist != nil,
                                    ifMatch: nil, base: base)
                var p = Pending(entryId: entryId, stamp: entry[EntryText.modifiedKey]?.int64Value ?? 0,
                                entry: entry, change: change, base: base, sentBefore: sentBefore)
                // OVERWRITE sends without a precondition, but not a copy
                // sent before whose answer never came (Pending.resendsSentCopy).
                if state.options.mergeMode != .overwrite || p.resendsSentCopy(modifiedField: target.modifiedField) {
                    p.change.ifMatch = base.flatMap { target.version(of: $0) }
                }
                out.append(p)
            }
            for e in dropped { try tx.delete(id: e) }
            return out
        }
    }

    private func commit(_ p: Pending, _ s: Settled, _ tx: SoupTransaction) throws {
        let current = try tx.entry(id: p.entryId)
        // Edited again while this batch was out: keep the edit as a change.
        let editedSince = current.map { $0[EntryText.modifiedKey]?.int64Value != p.stamp } ?? false
        switch s {
        case .synced(let answer):
            // A copy with blob references the store refuses is not taken:
            // the record as sent stays, and sync down meets the server's.
            let copy = try answer.flatMap { try taken($0, tx) }
            try SyncTables.forgetCreateSent(tx, p.entryId)
            try SyncTables.forgetSent(tx, p.entryId)
            var base = p.change.record
            if let copy = copy { base = copy }
            try SyncTables.setBase(tx, p.entryId, base)
            try SyncTables.removeConflict(tx, entryId: p.entryId)
            if var e = current, !editedSince {
                if let copy = copy { e.update(copy.members.lazy.map { ($0.key, $0.value) }) }
                LocalFlags.markClean(&e)
                try tx.save(e)
            } else if var e = current, LocalFlags.isSet(e, LocalFlags.created) {
                // It exists on the server now: later edits are updates.
                e[LocalFlags.created] = .bool(false)
                e[LocalFlags.updated] = .bool(true)
                try tx.save(e)
            }
            state.synced += 1
        case .superseded(let theirs):
            if try supersede(p, by: theirs, current: current, editedSince: editedSince, tx) {
                state.synced += 1
            } else {
                try fail(p, TureenError(.http, "'\(p.change.id)': the server's copy refers to blobs this store refuses; the change stays local"), current, tx)
            }
        case .deleted:
            try SyncTables.forgetCreateSent(tx, p.entryId)
            try SyncTables.forgetSent(tx, p.entryId)
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
            try fail(p, e, current, tx)
        }
    }

    private func fail(_ p: Pending, _ e: TureenError, _ current: JSONObject?, _ tx: SoupTransaction) throws {
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

    /// `copy`, a server's copy about to be written here, when the store
    /// takes its blob references: those this store lacks (a merge took
    /// another device's) are awaited through this sync. Nil when it refuses them.
    private func taken(_ copy: JSONObject, _ tx: SoupTransaction) throws -> JSONObject? {
        do {
            try store.awaitBlobs(of: .object(copy), owner: state.id, tx.transaction)
            return copy
        } catch let e as TureenError where e.code == .invalid {
            return nil
        }
    }

    /// See Settled.superseded. An edit made while the batch was out stays
    /// a local change: on the server's copy as its base, or, over a
    /// deletion, still with its sent copies, so the next run weighs it
    /// against that deletion by the merge mode.
    /// False when the server's copy refers to blobs the store refuses.
    private func supersede(_ p: Pending, by theirs: JSONObject?, current: JSONObject?, editedSince: Bool,
                           _ tx: SoupTransaction) throws -> Bool {
        guard let t = theirs else {
            if !editedSince, current != nil { try tx.delete(id: p.entryId) }
            return true
        }
        guard let copy = try taken(t, tx) else { return false }
        try SyncTables.forgetCreateSent(tx, p.entryId)
        try SyncTables.forgetSent(tx, p.entryId)
        try SyncTables.removeConflict(tx, entryId: p.entryId)
        try SyncTables.setBase(tx, p.entryId, editedSince ? copy : nil)
        if editedSince {
            if var e = current, LocalFlags.isSet(e, LocalFlags.created) {
                e[LocalFlags.created] = .bool(false)
                e[LocalFlags.updated] = .bool(true)
                try tx.save(e)
            }
        } else if current != nil {
            try tx.save(LocalFlags.entry(from: copy, entryId: p.entryId))
            try SyncTables.setBaseToEntry(tx, p.entryId)
        }
        return true
    }
}
