import TureenStore
import TureenCore

extension SyncRun {
    /// About as many records of 1 KB as the writer's page cache holds.
    static let recordsFillingCache = Store.cacheKiB

    /// Fetches pages into the soup, one transaction per page together with
    /// the state, so a crash or a cancel loses at most the page in flight.
    func down(incremental: Bool) throws {
        let since: Stamp? = incremental && state.maxTimeStamp >= 0 ? state.highest : nil
        // A run that goes on from a position costs the server one request
        // when nothing changed (the sync loop's common case): the containers
        // exist since the first run, and the total is not asked for.
        if since == nil { try target.containers?.ensure() }
        // A run that brought more records than the cache holds pages left
        // it full of the pages it wrote last (Store.releaseWriterCache).
        let doneBefore = state.done
        defer { if state.done - doneBefore >= SyncRun.recordsFillingCache { store.releaseWriterCache() } }
        let leave = state.options.mergeMode == .leaveIfChanged
        var highest = state.highest
        // A run without `since` receives no tombstones, so a record deleted
        // while it runs, after its page came, would stay here if the next run
        // started from the highest stamp seen. The collection's timestamp when
        // the first page was served caps what this run saves: the next run
        // asks for every change since then, deletions included.
        var ceiling: Int64?
        var first = true
        // The total a page carries counts what its URL brings, records
        // read again included; a count asked apart counts those past `since`.
        var totalHasRepeats = false
        // The triggers that keep bases, once per run, in a commit of their own
        // (they are schema: they stay whatever happens to the pages).
        try store.withWriteTransaction(origin: .sync) { c in try SyncTables.watch(try store.soupTransaction(c, soup, keyPath: nil)) }
        // Records committed late below the position (see
        // RestConfig.sinceOverlapMs) are asked for while the window may
        // still receive some; a date-time cannot be lowered.
        let overlap = target.sinceOverlapMs
        let asked = since.map { s in s.text == nil && overlap > 0 && state.overlapUntil != nil
            ? Stamp(ms: max(0, s.ms - overlap)) : s }
        let feed = try pages(since: asked.map(FeedPosition.stamp), countingPast: since.map(FeedPosition.stamp))
        do {
            while true {
                try cancel.check()
                guard let (fetched, counted) = try feed.next() else { break }
                let page = try target.pageDecoding?.decode(fetched) ?? fetched
                if let n = counted {
                    // n is the server's number: it must not overflow the sum.
                    state.totalSize = n > Int.max - state.done ? Int.max : state.done + n
                }
                if first {
                    // The server's count is of what this run brings; a
                    // resumed run adds what came before it.
                    if let t = page.total {
                        state.totalSize = t > Int.max - state.done ? Int.max : state.done + t
                        totalHasRepeats = true
                    }
                    if since == nil { ceiling = page.snapshot }
                    try checkNotFlushed(since: since?.ms, snapshot: page.snapshot)
                }
                first = false
                try commit(page, leave: leave, highest: &highest, ceiling: ceiling, repeatsOf: since,
                           totalHasRepeats: totalHasRepeats)
                // The page and its state are in; the run's final state is not.
                Fault.point("sync.down.page_committed")
                // The last page: the total is what came (a collection that
                // fits one page was never counted), so its report says 100.
                if page.next == nil { state.totalSize = state.done }
                Log.write(.info, .sync, "sync \(state.id) down: a page of \(page.records.count) record(s) committed; \(state.done) done, maxTimeStamp \(state.maxTimeStamp)")
                report()
            }
        } catch {
            // The page downloading meanwhile may be waiting out a Retry-After
            // or a slow server; the sync has failed, so it must not wait for
            // it. The feed lives until then: its release waits for its thread.
            target.abandon()
            withExtendedLifetime(feed) {}
            throw error
        }
        // The feed has ended: the total is now known, whatever the server
        // counted (records deleted meanwhile, or none counted at all).
        state.totalSize = state.done
        // A run from no position has now read the collection as it stood
        // at its first page, so that timestamp is where it stands even when
        // no record reached it (an empty collection, latest changes that
        // are deletions): left lower, the next run would again ask for
        // everything, and so never receive a deletion.
        if since == nil, let c = ceiling, c > highest.ms { highest = Stamp(ms: c) }
        let reached = highest.capped(at: ceiling)
        if (!target.sortedByModification || since == nil) && reached.ms > state.maxTimeStamp {
            state.highest = reached
            if overlap > 0 { state.overlapUntil = Clock.nowMs() + overlap }
        } else if let until = state.overlapUntil, state.startTime > until {
            // This run began after anything late could have committed, and
            // read the whole window: later runs need not read it again.
            state.overlapUntil = nil
        }
    }

    /// A collection whose timestamp is now below this sync's position was
    /// flushed or restored from an older copy: what it lost will not come
    /// back through `since`, and this device's records may be all that is
    /// left of them. Nothing of the page is applied; the state says so
    /// until the app republishes (tureen_sync_republish) or starts over.
    private func checkNotFlushed(since: Int64?, snapshot: Int64?) throws {
        guard let since = since, let snap = snapshot, snap < since else { return }
        state.serverFlushed = true
        throw TureenError(.conflict, "the server's collection timestamp (\(snap)) is older than this sync's position (maxTimeStamp \(since)): it was flushed or restored from an older copy; republish this device's records with \(store.callNames[.syncRepublish]), or delete the sync and start again")
    }

    /// Writes one page and the state in one transaction: each record as a
    /// clean entry that is its own base, deletions, and conflicts where
    /// LEAVE_IF_CHANGED keeps a local change. A record without a sane
    /// modification stamp fails alone: it is neither stored nor counted
    /// towards maxTimeStamp. So does one holding a blob reference the
    /// store refuses, but its stamp counts: read again it would fail
    /// again; it comes once the server changes it. The state changes only
    /// if the page commits.
    /// A run from a position receives again the records up to its starting
    /// stamp (`repeatsOf`: the since parameter goes back to include the
    /// stamp, and further by the target's overlap), which the runs before it
    /// brought and counted: they are applied (one that committed late is
    /// new here), but counted neither in `done` nor in the total.
    private func commit(_ page: FetchPage, leave: Bool, highest: inout Stamp, ceiling: Int64?, repeatsOf since: Stamp?,
                        totalHasRepeats: Bool) throws {
        let before = (state, highest)
        var applied: [RecordEvent] = [], collided: [RecordEvent] = []
        do {
            let (awaited, refused, blobFailures) = try blobsBeforeCommit(page.records)
            try store.withWriteTransaction(origin: .sync) { c in
                for r in awaited { try store.wantBlob(r, owner: state.id, c) }
                let tx = try store.soupTransaction(c, soup, keyPath: target.idField)
                let outdated = PageRepeats.outdated(page.records, idField: target.idField, modifiedField: target.modifiedField)
                for (n, record) in page.records.enumerated() {
                    let m = Stamp.read(record[target.modifiedField])
                    let again = since.map { s in m.map { $0.ms <= s.ms } ?? false } ?? false
                    if again {
                        let counted = totalHasRepeats || (since?.text != nil && m?.ms == since?.ms)
                        if counted, state.totalSize > state.done { state.totalSize -= 1 }
                    } else {
                        state.done += 1
                    }
                    guard let key = record[target.idField], let id = SoupTransaction.keyText(key) else {
                        state.failedRecords.append(.null)
                        continue
                    }
                    guard let m else {
                        state.failedRecords.append(.string(id))
                        continue
                    }
                    // The first of equal stamps keeps its text: they name the same millisecond.
                    if m.ms > highest.ms { highest = m }
                    // Its stamp counts, as a refused blob reference's does:
                    // it comes again once the server changes it, or with a
                    // sync from no position.
                    if let e = page.failures[n] ?? blobFailures[n] {
                        state.failDown(id, entryId: try tx.entryId(key: key), e)
                        continue
                    }
                    if outdated.contains(n) { continue }
                    // Stored, its reference would be one the store's own
                    // upsert refuses, in an entry the app could not write back.
                    if refused.contains(n) {
                        state.failedRecords.append(.string(id))
                        continue
                    }
                    switch try apply(record, text: (page.texts, n), key: key, id: id, leave: leave, again: again,
                                     fromPosition: since != nil, tx) {
                    case .applied(let e)?: applied.append(e)
                    case .collided(let e)?: collided.append(e)
                    case nil: break
                    }
                }
                if target.sortedByModification {
                    let was = state.maxTimeStamp
                    state.highest = highest.capped(at: ceiling)
                    if state.maxTimeStamp > was, target.sinceOverlapMs > 0 {
                        state.overlapUntil = Clock.nowMs() + target.sinceOverlapMs
                    }
                }
                try Fault.point("sync.down.page_before_state", failing: .io)
                try saveState(c)
            }
        } catch {
            (state, highest) = before
            throw error
        }
        announce(.recordDeltaReceived, applied)
        announce(.collisionDetected, collided)
        if !applied.isEmpty {
            func count(_ op: RecordOperation) -> JSON { .int(Int64(applied.lazy.filter { $0.operation == op }.count)) }
            event(.deltaReceived, [("created", count(.create)), ("updated", count(.update)), ("deleted", count(.delete))])
        }
    }

    /// What one record of a page did to the soup.
    private enum Applied {
        case applied(RecordEvent)
        case collided(RecordEvent)
    }

    /// One valid record of a page, inside the page's transaction. `again`:
    /// its stamp is not past the run's position, so it most likely came
    /// before (see `commit`). `fromPosition`: the run asked only for what
    /// changed since the sync's position.
    private func apply(_ record: JSONObject, text: (RecordTexts?, Int), key: JSON, id: String, leave: Bool, again: Bool,
                       fromPosition: Bool, _ tx: SoupTransaction) throws -> Applied? {
        let entryId = try tx.entryId(key: key)
        let local = try entryId.flatMap { try tx.entry(id: $0) }
        let changedHere = local.map(LocalFlags.isLocal) ?? false
        if target.isTombstone(record) {
            guard let e = entryId else { return nil }
            // A deletion read again must not undo what was done about it
            // here (a conflict resolved "yours", a record made again). Had
            // it come late, never seen, the sync up of the local change
            // meets it: the server refuses a change to a deleted record.
            if changedHere && again { return nil }
            if changedHere && leave, try !createOvertaken(local, e, id, tx) {
                let base = try SyncTables.base(tx, e)
                try SyncTables.addConflict(tx, Conflict(entryId: e, recordId: id, syncId: state.id,
                                                       base: base, theirs: nil, yours: local))
                state.conflictIds.append(e)
                return .collided(RecordEvent(recordId: id, entryId: e, operation: .delete))
            }
            try tx.delete(id: e)
            try SyncTables.setBase(tx, e, nil)
            try SyncTables.removeConflict(tx, entryId: e)
            state.synced += 1
            return .applied(RecordEvent(recordId: id, entryId: e, operation: .delete))
        } else if changedHere, let e = entryId, let l = local, try isOwnUnconfirmedWrite(record, of: l, e, tx) {
            // The server holds a copy this device sent whose answer never
            // came (killed while it was out, a connection lost after the
            // commit): no one else's change, and the local one is newer.
            // The base becomes that copy, in every merge mode, so neither
            // this run nor the next sync up's precondition undoes the edit.
            try SyncTables.setBase(tx, e, record)
            return nil
        } else if changedHere && leave, try !createOvertaken(local, entryId, id, tx) {
            // Kept as changed here; the old base stays, so the
            // next sync up sees that the server moved too.
            if let e = entryId, let k = try SyncTables.conflicts(tx, entryId: e).first,
               let later = k.withLaterTheirs(record, syncId: state.id, modifiedField: target.modifiedField) {
                try SyncTables.addConflict(tx, later)
            }
            return nil
        } else if let l = local, !changedHere, LocalFlags.holds(l, exactly: record) {
            // Already here as the server has it: most often this device's
            // own change coming back after its sync up. No write, no event.
            state.synced += 1
            return nil
        } else if changedHere, fromPosition, let e = entryId, let l = local, let base = try SyncTables.storedBase(tx, e),
                  sameCopy(record, base) {
            // The very copy this local change was made from: read again (a
            // since parameter goes back to include the stamp it stopped at),
            // or this device's own sync up coming back. A run from a position
            // brings what changed, and the server changed nothing here. A run
            // from none asks for the server's every record, which OVERWRITE
            // takes over local changes, as SmartSync's does.
            // Its fields alone are compared: the same copy written again (a
            // request the network delivered twice, a device sending an
            // unchanged copy) carries a later stamp yet changed nothing, and
            // taking it dropped the local change. That stamp becomes the
            // base's, so sync up's precondition names the server's version,
            // unless the change is a copy sent before whose answer never
            // came: it may have landed and this copy been written over it
            // since (another device's), which the precondition of the old
            // base lets sync up weigh instead of sending the copy over it
            // again (ChangePusher's mayReplay).
            if !LocalFlags.holds(base, exactly: record), try !resendsUnconfirmedCopy(l, e, tx) {
                try SyncTables.setBase(tx, e, record)
            }
            return nil
        } else {
            // The old base goes first, so the trigger does not copy
            // the entry this record replaces; then the entry is the base.
            // A new entry's id was never used: it has no conflict to clear.
            if let old = entryId { try SyncTables.setBase(tx, old, nil) }
            // The local change this record replaces goes, and with it what
            // was kept of its sending.
            if changedHere, let old = entryId {
                try SyncTables.forgetSent(tx, old)
                try SyncTables.forgetCreateSent(tx, old)
            }
            let e = try save(record, text: text, entryId: entryId, tx)
            try SyncTables.setBaseToEntry(tx, e)
            if entryId != nil { try SyncTables.removeConflict(tx, entryId: e) }
            state.synced += 1
            return .applied(RecordEvent(recordId: id, entryId: e, operation: entryId == nil ? .create : .update))
        }
    }

    /// Whether `record` is a copy of the entry that sync up sent and no
    /// answer confirmed (SyncTables.markSent), changed here since: edited
    /// again or deleted. One the entry still holds is simply applied.
    private func isOwnUnconfirmedWrite(_ record: JSONObject, of entry: JSONObject, _ entryId: Int64,
                                       _ tx: SoupTransaction) throws -> Bool {
        let modified = target.modifiedField
        guard LocalFlags.isCopy(record, ofAny: try SyncTables.sentCopies(tx, entryId), modifiedField: modified)
        else { return false }
        if LocalFlags.isSet(entry, LocalFlags.deleted) { return true }
        let now = LocalFlags.serverFields(entry, idField: target.idField, modifiedField: modified, fieldlist: nil)
        return !LocalFlags.isCopy(record, of: now, modifiedField: modified)
    }

    /// Whether the local change is still a copy (or the delete) sync up
    /// sent and no answer confirmed: unchanged here since.
    private func resendsUnconfirmedCopy(_ entry: JSONObject, _ entryId: Int64, _ tx: SoupTransaction) throws -> Bool {
        let sent = try SyncTables.sentCopies(tx, entryId)
        if LocalFlags.isSet(entry, LocalFlags.deleted) { return sent.contains(SyncTables.sentDelete) }
        let now = LocalFlags.serverFields(entry, idField: target.idField, modifiedField: target.modifiedField, fieldlist: nil)
        return LocalFlags.isCopy(now, ofAny: sent, modifiedField: target.modifiedField)
    }

    /// Whether `record` holds the fields of `base` (a server copy, or the
    /// entry that is its own base), its modification stamp aside.
    private func sameCopy(_ record: JSONObject, _ base: JSONObject) -> Bool {
        if LocalFlags.holds(base, exactly: record) { return true }
        var fields = LocalFlags.withoutLocalFields(base)
        fields[target.modifiedField] = nil
        return LocalFlags.isCopy(record, of: fields, modifiedField: target.modifiedField)
    }

    /// Whether the entry is a create sent under an id no other device picks
    /// (ClientId.isRandom), answer lost, unchanged here since: the server's
    /// copy of that id, or its tombstone, came after that create went
    /// through, so it is no conflict with a local change; it is applied in
    /// every merge mode, as it would be over a clean entry.
    private func createOvertaken(_ entry: JSONObject?, _ entryId: Int64?, _ id: String, _ tx: SoupTransaction) throws -> Bool {
        guard let entry, let entryId, LocalFlags.isSet(entry, LocalFlags.created),
              !LocalFlags.isSet(entry, LocalFlags.deleted), ClientId.isRandom(id) else { return false }
        let modified = target.modifiedField
        let now = LocalFlags.serverFields(entry, idField: target.idField, modifiedField: modified, fieldlist: nil)
        return LocalFlags.isCopy(now, ofAny: try SyncTables.sentCopies(tx, entryId), modifiedField: modified)
    }

    /// Saves `record` as a clean entry, from its text as the server sent it
    /// where that text is the entry's (`LocalFlags.cleanText`): writing
    /// each record out again was a tenth of sync down's work.
    private func save(_ record: JSONObject, text: (RecordTexts?, Int), entryId: Int64?, _ tx: SoupTransaction) throws -> Int64 {
        let entry = LocalFlags.entry(from: record, entryId: entryId)
        let clean = text.0?.withText(text.1) { LocalFlags.cleanText(of: record, text: $0) } ?? nil
        guard let clean else { return try tx.save(entry, new: entryId == nil) }
        return try clean.withUnsafeBufferPointer { try tx.save(entry, stored: $0, new: entryId == nil) }
    }

    /// The run's pages from `since`, fetched ahead on another thread when
    /// the target allows, and not decoded yet (PageDecoding). The total is asked for after the first page, only
    /// when more pages are to come and the page did not say (records past
    /// `countingPast`, or all of them in a run from no position): a first
    /// sync of a collection that fits one page costs one request, not two.
    /// The count rides with that page (the target's connection serves one
    /// request at a time, so the feed sends it), so every report after the
    /// start has it.
    private func pages(since: FeedPosition?, countingPast position: FeedPosition?) throws -> PageFeed<(FetchPage, counted: Int?)> {
        let target = self.target
        var next: JSON?
        var started = false
        var trail = PageTrail()
        return try PageFeed(background: target.fetchesOnAnyThread) {
            if started && next == nil { return nil }
            let page = try target.pageDecoding?.fetchUndecoded(since: since, next: next) ?? target.fetch(since: since, next: next)
            var counted: Int?
            if !started, page.next != nil, page.total == nil, let counting = target.counting {
                counted = try counting.count(since: position)
            }
            started = true
            try trail.follow(page.next)
            next = page.next
            return (page, counted)
        }
    }

    /// Removes clean local records the server no longer has; returns how many.
    func cleanGhosts() throws -> Int {
        var onServer = Set<ExactString>()
        var next: JSON?
        var trail = PageTrail()
        repeat {
            try cancel.check()
            let page = try target.fetch(since: nil, next: next)
            for r in page.records where !target.isTombstone(r) {
                if let id = r[target.idField].flatMap(SoupTransaction.keyText) { onServer.insert(ExactString(id)) }
            }
            try trail.follow(page.next)
            next = page.next
        } while next != nil
        return try store.withWriteTransaction(origin: .sync) { c in
            try SyncTables.create(c)
            let tx = try store.soupTransaction(c, soup, keyPath: target.idField)
            var removed = 0
            for (entryId, key, entry) in try tx.keys() where !LocalFlags.isLocal(entry) {
                guard let k = key, !onServer.contains(ExactString(k)) else { continue }
                try tx.delete(id: entryId)
                try SyncTables.setBase(tx, entryId, nil)
                removed += 1
            }
            return removed
        }
    }
}
