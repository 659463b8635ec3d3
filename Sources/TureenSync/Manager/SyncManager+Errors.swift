import TureenStore
import TureenCore

/// What the app can do with a record the server refused (RhoConnect's
/// onCreateError / onUpdateError / onDeleteError).
public enum ErrorAction: String, Sendable {
    /// Send it again with the next sync up (its attempt count starts over).
    case retry
    /// Drop the local change: the entry goes back to the server's copy, or
    /// away when the server never had it.
    case rollback
    /// The server's record is gone: send the entry as a new record.
    case recreate
    /// Delete the record, here and (with the next sync up) on the server.
    case delete
}

extension ErrorAction {
    public static func parse(_ text: String) throws -> ErrorAction {
        guard let action = ErrorAction(rawValue: text) else {
            throw TureenError.invalid("unknown action '\(text)'; use retry, rollback, recreate or delete")
        }
        return action
    }
}

extension SyncManager {
    public func resolveError(soup: String, entryId: Int64, action: ErrorAction) throws {
        guard try store.soupExists(soup) else { throw TureenError(.notFound, "no soup named '\(soup)'") }
        try store.withWriteTransaction { c in
            try SyncTables.create(c)
            let tx = try store.soupTransaction(c, soup, keyPath: nil)
            guard var e = try tx.entry(id: entryId) else {
                throw TureenError(.notFound, "soup '\(soup)' has no entry \(entryId)")
            }
            guard LocalFlags.isLocal(e), e[LocalFlags.lastError] != nil else {
                throw TureenError(.notFound, "entry \(entryId) of soup '\(soup)' has no sync error to resolve")
            }
            LocalFlags.clearError(&e)
            switch action {
            case .retry:
                try tx.save(e)
            case .rollback:
                if let base = try SyncTables.base(tx, entryId) {
                    try tx.save(LocalFlags.entry(from: base, entryId: entryId))
                } else {
                    try tx.delete(id: entryId)  // the server never had it
                }
                try SyncTables.removeConflict(tx, entryId: entryId)
            case .recreate:
                try SyncTables.setBase(tx, entryId, nil)
                e[LocalFlags.created] = .bool(true)
                e[LocalFlags.updated] = .bool(false)
                e[LocalFlags.deleted] = .bool(false)
                try tx.save(e)
            case .delete:
                if LocalFlags.isSet(e, LocalFlags.created), try !SyncTables.createWasSent(tx, entryId),
                   try SyncTables.base(tx, entryId) == nil {
                    try tx.delete(id: entryId)
                } else {
                    e[LocalFlags.deleted] = .bool(true)
                    try tx.save(e)
                }
            }
        }
    }
}
