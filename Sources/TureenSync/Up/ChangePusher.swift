import TureenStore
import TureenCore

/// One local change on its way, with what it was made from.
struct Pending {
    var entryId: Int64
    var stamp: Int64          // _soupLastModifiedDate when read: a later edit must not be marked clean
    var entry: JSONObject
    var change: Change
    var base: JSONObject?
    /// Copies of the entry that earlier runs sent and no answer confirmed
    /// (SyncTables.markSent): the server may hold one, this change's own past.
    var sentBefore: [JSONObject] = []

    /// A create an earlier run sent, answer lost, under an id no other
    /// device picks (ClientId.isRandom): whatever the server holds or held
    /// under that id came from it, so a tombstone there is a deletion made
    /// after it, and another copy a write made on top of it.
    var resendsOwnCreate: Bool {
        change.kind == .create && !sentBefore.isEmpty && ClientId.isRandom(change.id)
    }

    /// Whether the entry is still one of the copies sent: nothing changed here since.
    func unchangedSinceSent(modifiedField: String) -> Bool {
        LocalFlags.isCopy(change.record, ofAny: sentBefore, modifiedField: modifiedField)
    }

    /// A copy (or a delete) an earlier run sent, sent again unchanged: it
    /// may be on the server already, and another device's write made over
    /// it since, which this one would undo with an older write. (A copy
    /// changed here since, or a delete after a copy sent, is a new write.)
    func resendsSentCopy(modifiedField: String) -> Bool {
        change.kind == .delete ? sentBefore.contains(SyncTables.sentDelete) : unchangedSinceSent(modifiedField: modifiedField)
    }

    /// This change to send again after its request failed in a way that
    /// may have applied it: what it sent joins the copies the server may
    /// hold (collectChanges recorded it in the store before sending), and
    /// it goes under its base's precondition, so it is treated as a copy an
    /// earlier run sent whose answer never came. A partial update (a
    /// fieldlist) is no whole copy to compare the server's with: it only
    /// gains the precondition, as collectChanges keeps no copy of it.
    func resentAfterLostAnswer(_ target: SyncTarget) -> Pending {
        var p = self
        let sent = change.kind == .delete ? SyncTables.sentDelete : change.record
        if !change.partial && !p.sentBefore.contains(sent) { p.sentBefore.append(sent) }
        if p.change.ifMatch == nil { p.change.ifMatch = base.flatMap(target.version(of:)) }
        return p
    }
}

/// How a change ended.
enum Settled {
    case synced(JSONObject?)
    case deleted
    case conflict(JSONObject?)
    case failed(TureenError)
    /// This store's create went through earlier, answer lost, and the
    /// server has moved on since (another device's copy, or nil: deleted),
    /// with no change here since: the entry becomes the server's, or goes.
    case superseded(JSONObject?)
}

/// Sends a batch of local changes over one connection and follows each
/// outcome to its end (a failed precondition looked into, merged, sent
/// again). It touches no store and no sync state, so sync up can run
/// several, each over its own connection, while it commits on its thread.
struct ChangePusher {
    let target: SyncTarget
    let mergeMode: MergeMode
    let fieldlist: [String]?

    /// How each of `part`'s changes ended, in order. A target sends no
    /// write again as it was once it may have been applied: sent again
    /// unchanged, a write without a precondition would undo another
    /// device's write made over it meanwhile (and a create, Kinto's
    /// If-None-Match passing over a tombstone, bring back a record deleted
    /// meanwhile), and one with a precondition would fail it and be taken
    /// for a change made elsewhere. Such a failure (TureenError.mayHaveApplied)
    /// is followed by the part sent again as copies whose answer never
    /// came (Pending.resentAfterLostAnswer): a change already applied is
    /// then recognised, and one overtaken since by another device's write
    /// becomes a conflict instead of undoing that write. (A write sent
    /// while following an outcome, below, fails the sync instead; the
    /// next run sends it again the same way.)
    func push(_ part: [Pending]) throws -> [Settled] {
        var part = part
        var outcomes: [PushOutcome] = []
        var attempt = 0
        while true {
            do {
                outcomes = try send(part.map { $0.change }, lookingUp: part.map(\.resendsOwnCreate))
                break
            } catch let e as TureenError where e.mayHaveApplied {
                guard try target.pauseBeforeResend(attempt: attempt) else {
                    // A server that answers 5xx to these changes every time
                    // refuses them, as it refuses a change it answers 4xx:
                    // they fail here (counted toward maxAttempts) and the
                    // run goes on, so one record cannot hold back the rest.
                    // A connection lost every time fails the run.
                    if e.code == .http { return part.map { _ in Settled.failed(e) } }
                    throw e
                }
                Log.write(.info, .sync, "\(e.message): its \(part.count) change(s) go again under preconditions")
                part = part.map { $0.resentAfterLostAnswer(target) }
                attempt += 1
            }
        }
        var settled: [Settled] = []
        settled.reserveCapacity(part.count)
        for (p, o) in zip(part, outcomes) {
            // A server copy the target's transformers cannot read fails this change alone.
            do { settled.append(try settle(p, o, depth: 0)) } catch let f as TransformFailure { settled.append(.failed(f.error)) }
        }
        return settled
    }

    /// Follows an outcome to its end: a precondition that failed is looked
    /// into (a retried change the server already applied counts as done),
    /// then merged, overwritten or left as a conflict by the merge mode.
    private func settle(_ p: Pending, _ outcome: PushOutcome, depth: Int) throws -> Settled {
        let mode = mergeMode
        func again(_ change: Change) throws -> Settled {
            guard depth < 3 else { return .failed(TureenError(.conflict, "the server copy kept changing during the sync")) }
            var next = p
            next.change = change
            return try settle(next, try sendOne(change), depth: depth + 1)
        }
        // A mode that publishes yours sending again a copy an earlier run
        // may have written (under its base's precondition, see
        // SyncRun.collectChanges): a server copy that is neither the base
        // nor one sent from here may be a write made over it, which
        // publishing would undo with the older write replayed.
        let publishesYours = mode == .overwrite || mode == .mergeAcceptYours
        let mayReplay = publishesYours && depth == 0 && p.resendsSentCopy(modifiedField: target.modifiedField)
        // Publishing yours again where the server deleted the record: what
        // OVERWRITE and MERGE_ACCEPT_YOURS promise, and a create's retry.
        let republishes = publishesYours && !mayReplay
        func republish() throws -> Settled {
            var c = p.change
            c.kind = .create
            c.ifMatch = nil
            c.record = LocalFlags.serverFields(p.entry, idField: target.idField, modifiedField: target.modifiedField,
                                               fieldlist: fieldlist)
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
            let theirs = (known ? copy : try target.get(id: p.change.id)).map { naming($0, p) }
            if let t = theirs, let e = foreign(t, p.change) { return .failed(e) }
            let mine = { (t: JSONObject) in LocalFlags.isCopy(t, ofAny: p.sentBefore, modifiedField: target.modifiedField) }
            // The create went through (resendsOwnCreate); a server copy
            // that is not one sent from here, or none, came after it.
            let createOvertaken = p.resendsOwnCreate && !(theirs.map(mine) ?? false)
            if createOvertaken && p.unchangedSinceSent(modifiedField: target.modifiedField) {
                return .superseded(theirs)
            }
            guard let t = theirs else {
                // Changed here after the lost create: a local change against
                // a remote delete, as for an update.
                if createOvertaken { return republishes ? try republish() : .conflict(nil) }
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
            // An earlier run's write whose answer never came: no one else's
            // change, and this one was made after it; it goes on top of it.
            let own = mine(t)
            let yours = LocalFlags.serverFields(p.entry, idField: target.idField, modifiedField: target.modifiedField, fieldlist: nil)
            // Changed here after a create another device then changed: both
            // changed the copy that create sent.
            let base = createOvertaken ? p.sentBefore.last : p.base
            let changes = Conflict.changes(base: base, theirs: t, yours: p.change.kind == .delete ? nil : yours, ignoring: target.modifiedField)
            // OVERWRITE would undo all of the other write, a merge the fields both changed.
            if mayReplay && !own && !p.resendsOwnCreate && (mode == .overwrite || !changes.conflicting.isEmpty) {
                return .conflict(t)
            }
            let go: Bool
            switch mode {
            case .overwrite, .mergeAcceptYours: go = true
            case .leaveIfChanged: go = own
            case .mergeFailIfChanged: go = own || changes.remote.isEmpty
            case .mergeFailIfConflict: go = own || changes.conflicting.isEmpty
            }
            guard go else { return .conflict(t) }
            var c = p.change
            c.ifMatch = mode == .overwrite ? nil : target.version(of: t)
            c.base = t
            if c.kind == .create { c.kind = .update }
            if c.kind != .delete && mode != .overwrite && !own {
                c.record = Conflict.merged(base: base, theirs: t, yours: yours, ignoring: target.modifiedField)
                c.record[target.modifiedField] = nil
                c.partial = false
            }
            var next = p
            next.base = t
            next.change = c
            next.sentBefore = []
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
    /// A change marked in `lookingUp` is looked up first (resendsOwnCreate):
    /// a create sent again over a tombstone would bring the record back, as
    /// Kinto's If-None-Match does not stop it; what the server holds stands
    /// for the answer a failed precondition would have brought.
    private func send(_ changes: [Change], lookingUp: [Bool] = []) throws -> [PushOutcome] {
        var known: [PushOutcome?] = []
        var unsent: [Change] = []
        for (i, c) in changes.enumerated() {
            do {
                if let answer = try readFirst(c, lookingUp: i < lookingUp.count && lookingUp[i]) {
                    known.append(answer)
                    continue
                }
            } catch let f as TransformFailure {
                known.append(.rejected(f.error))
                continue
            }
            known.append(nil)
            unsent.append(c)
        }
        var answers = try (unsent.isEmpty ? [] : target.push(unsent)).makeIterator()
        return known.map { $0 ?? answers.next() ?? .rejected(TureenError(.internal, "the target answered fewer changes than it was sent")) }
    }

    /// What a look or a read before sending found, standing for the
    /// answer (see `send`); nil when the change is to be sent.
    private func readFirst(_ c: Change, lookingUp: Bool) throws -> PushOutcome? {
        if lookingUp {
            switch try target.lookUp(id: c.id) {
            case .live(let theirs): return .conflict(theirs, known: true)
            case .deleted: return .conflict(nil, known: true)
            case .none: return nil
            }
        } else if readsFirst(c) {
            let theirs = try target.get(id: c.id)
            if moved(from: c.base, to: theirs) { return .conflict(theirs, known: true) }
        }
        return nil
    }

    private func sendOne(_ change: Change) throws -> PushOutcome {
        try send([change])[0]
    }

    /// A target that compares the base itself (callback hosts receive it
    /// with each change) needs no read; a REST server only compares if it
    /// is sent a precondition.
    private func readsFirst(_ c: Change) -> Bool {
        mergeMode != .overwrite && c.kind != .create && c.base != nil && c.ifMatch == nil && !target.comparesBase
    }

    /// Whether the server's copy is no longer the base: its modification
    /// stamp differs, or it is gone. A base without a stamp (kept from a
    /// write the server answered without the record) is compared field by field.
    private func moved(from base: JSONObject?, to theirs: JSONObject?) -> Bool {
        guard let b = base, let t = theirs else { return true }
        if let stamp = b[target.modifiedField] { return t[target.modifiedField] != stamp }
        return !Conflict.changes(base: b, theirs: t, yours: b, ignoring: target.modifiedField).remote.isEmpty
    }

    /// A copy that names no record is the one at the change's URL: it gets
    /// the entry's id, so resolving the conflict with it (theirs) keeps the
    /// entry tied to its record, where an entry without an id would come
    /// back from the next sync down as a second one.
    private func naming(_ copy: JSONObject, _ p: Pending) -> JSONObject {
        guard copy[target.idField] == nil else { return copy }
        var named = copy
        named[target.idField] = p.entry[target.idField] ?? .string(p.change.id)
        return named
    }

    /// A copy the server gives as this record's that names another record.
    /// Kept as the conflict's "theirs", resolving it would turn the entry
    /// into that other record (two entries with one id, the entry's own id
    /// gone), so the change fails alone and stays local.
    private func foreign(_ copy: JSONObject, _ c: Change) -> TureenError? {
        guard let named = copy[target.idField], SoupTransaction.keyText(named)?.hasSameBytes(as: c.id) != true else { return nil }
        let shown = HeaderText.printable(String((SoupTransaction.keyText(named) ?? named.text).prefix(100)))
        return TureenError(.http, "'\(c.id)': the server's current copy of the record names record '\(shown)'; the change stays local")
    }

    private func sameFields(_ sent: JSONObject, _ theirs: JSONObject) -> Bool {
        let index = theirs.indexForLookups()
        for m in sent.members where !m.key.hasSameBytes(as: target.modifiedField) {
            if theirs.value(m.key, index: index) != m.value { return false }
        }
        return true
    }
}
