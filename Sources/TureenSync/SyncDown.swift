import TureenStore

extension SyncRun {
    /// Fetches pages into the soup, one transaction per page together with
    /// the state, so a crash or a cancel loses at most the page in flight.
    func down(incremental: Bool) throws {
        if let rest = target as? RestTarget { try rest.ensureContainers() }
        let since: Int64? = incremental && state.maxTimeStamp >= 0 ? state.maxTimeStamp : nil
        let leave = state.options.mergeMode == .leaveIfChanged
        var highest = state.maxTimeStamp
        var next: JSON?
        var first = true
        repeat {
            try cancel.check()
            let page = try target.fetch(since: since, next: next)
            if first, let t = page.total { state.totalSize = t }
            first = false
            try store.withWriteTransaction { c in
                let tx = try store.soupTransaction(c, soup, keyPath: target.idField)
                for record in page.records {
                    guard let key = record[target.idField], let id = SoupTransaction.keyText(key) else {
                        throw TureenError(.http, "a record from the server has no \"\(target.idField)\" (string or integer)")
                    }
                    if let m = record[target.modifiedField]?.int64Value { highest = max(highest, m) }
                    state.done += 1
                    let entryId = try tx.entryId(key: key)
                    let local = try entryId.flatMap { try tx.entry(id: $0) }
                    let changedHere = local.map(LocalFlags.isLocal) ?? false
                    if target.isTombstone(record) {
                        guard let e = entryId else { continue }
                        if changedHere && leave {
                            let base = try SyncTables.base(c, soup, id)
                            try SyncTables.addConflict(c, Conflict(soup: soup, entryId: e, recordId: id, syncId: state.id,
                                                                   base: base, theirs: nil, yours: local))
                            state.conflictIds.append(e)
                            continue
                        }
                        try tx.delete(id: e)
                        try SyncTables.setBase(c, soup, id, nil)
                        try SyncTables.removeConflict(c, soup: soup, entryId: e)
                    } else if changedHere && leave {
                        // Kept as changed here; the old base stays, so the
                        // next sync up sees that the server moved too.
                        continue
                    } else {
                        let e = try tx.save(LocalFlags.entry(from: record, entryId: entryId))
                        try SyncTables.setBase(c, soup, id, record)
                        try SyncTables.removeConflict(c, soup: soup, entryId: e)
                    }
                    state.synced += 1
                }
                if target.sortedByModification { state.maxTimeStamp = highest }
                try saveState(c)
            }
            report()
            next = page.next
        } while next != nil
        if !target.sortedByModification && highest > state.maxTimeStamp {
            state.maxTimeStamp = highest
        }
    }

    /// Removes clean local records the server no longer has; returns how many.
    func cleanGhosts() throws -> Int {
        var onServer = Set<String>()
        var next: JSON?
        repeat {
            try cancel.check()
            let page = try target.fetch(since: nil, next: next)
            for r in page.records where !target.isTombstone(r) {
                if let id = r[target.idField].flatMap(SoupTransaction.keyText) { onServer.insert(id) }
            }
            next = page.next
        } while next != nil
        return try store.withWriteTransaction { c in
            let tx = try store.soupTransaction(c, soup, keyPath: target.idField)
            var removed = 0
            for (entryId, key, entry) in try tx.keys() where !LocalFlags.isLocal(entry) {
                guard let k = key, !onServer.contains(k) else { continue }
                try tx.delete(id: entryId)
                try SyncTables.setBase(c, soup, k, nil)
                removed += 1
            }
            return removed
        }
    }
}
