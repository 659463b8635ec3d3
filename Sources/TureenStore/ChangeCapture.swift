import Glibc

/// Records what the writer connection's transactions change, through
/// SQLite's update, commit and rollback hooks: the rows of soup tables
/// (TABLE_<id>) inserted, updated and deleted, folded per soup while the
/// transaction runs, kept when it commits, dropped when it rolls back.
///
/// Only the thread holding the store's write lock touches it (SQLite calls
/// the hooks on the thread that steps the statement), so it needs no lock.
/// What the store cannot see as rows — a clear (SQLite truncates a table
/// without visiting rows), an alter, a drop — is marked by the store itself.
final class ChangeCapture {
    private var open: [Int64: SoupDelta] = [:]
    private var committed: [(ChangeOrigin, [Int64: SoupDelta])] = []
    /// The origin of the writes under way; set by the store for each write.
    var origin = ChangeOrigin.app

    /// Installs the hooks on `c`; the capture must outlive the connection's
    /// use of them (the store keeps both and removes the hooks first).
    func install(on c: Connection) {
        let me = Unmanaged.passUnretained(self).toOpaque()
        _ = c.api.update_hook(c.db, { ctx, op, database, table, rowid in
            // Only the store itself: rekey copies every row into an attached
            // database, and those are no changes to the soups.
            guard let ctx = ctx, let table = table, let database = database, strcmp(database, "main") == 0 else { return }
            Unmanaged<ChangeCapture>.fromOpaque(ctx).takeUnretainedValue().row(op, table, rowid)
        }, me)
        _ = c.api.commit_hook(c.db, { ctx in
            guard let ctx = ctx else { return 0 }
            Unmanaged<ChangeCapture>.fromOpaque(ctx).takeUnretainedValue().commit()
            return 0  // 0 lets the commit go on
        }, me)
        _ = c.api.rollback_hook(c.db, { ctx in
            guard let ctx = ctx else { return }
            Unmanaged<ChangeCapture>.fromOpaque(ctx).takeUnretainedValue().rollback()
        }, me)
    }

    static func uninstall(from c: Connection) {
        _ = c.api.update_hook(c.db, nil, nil)
        _ = c.api.commit_hook(c.db, nil, nil)
        _ = c.api.rollback_hook(c.db, nil, nil)
    }

    /// Made once: SQLite calls `row` for every row a write touches.
    private static let tablePrefix: [UInt8] = Array("TABLE_".utf8)

    /// The soup id of a soup's own table ("TABLE_12"), nil for any other
    /// table (full-text tables, Tureen's and the sync engine's tables).
    static func soupId(table: UnsafePointer<CChar>) -> Int64? {
        var p = UnsafeRawPointer(table).assumingMemoryBound(to: UInt8.self)
        for b in tablePrefix {
            guard p.pointee == b else { return nil }
            p += 1
        }
        var id: Int64 = 0
        var digits = 0
        while p.pointee >= 0x30 && p.pointee <= 0x39 && digits < 18 {
            id = id * 10 + Int64(p.pointee - 0x30)
            p += 1
            digits += 1
        }
        return digits > 0 && p.pointee == 0 ? id : nil
    }

    private func row(_ op: Int32, _ table: UnsafePointer<CChar>, _ rowid: Int64) {
        guard let soup = ChangeCapture.soupId(table: table) else { return }
        switch op {
        case 18: open[soup, default: SoupDelta()].inserted(rowid)  // SQLITE_INSERT
        case 23: open[soup, default: SoupDelta()].changed(rowid)   // SQLITE_UPDATE
        case 9: open[soup, default: SoupDelta()].removed(rowid)    // SQLITE_DELETE
        default: break
        }
    }

    func markCleared(_ soupId: Int64) { open[soupId, default: SoupDelta()].cleared = true }
    func markAltered(_ soupId: Int64) { open[soupId, default: SoupDelta()].altered = true }
    func markDropped(_ soupId: Int64, name: String) {
        open[soupId, default: SoupDelta()].cleared = true
        open[soupId, default: SoupDelta()].droppedName = name
    }

    private func commit() {
        if !open.isEmpty { committed.append((origin, open)) }
        open = [:]
    }

    private func rollback() { open = [:] }

    /// The transactions committed since the last call, oldest first.
    func takeCommitted() -> [(ChangeOrigin, [Int64: SoupDelta])] {
        defer { committed = [] }
        return committed
    }
}
