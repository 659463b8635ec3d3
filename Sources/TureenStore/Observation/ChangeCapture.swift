import Glibc
import TureenCore

/// Records what the writer connection's transactions change, through
/// SQLite's update, commit and rollback hooks: the rows of soup tables
/// (TABLE_<id>) inserted, updated and deleted, folded per soup while the
/// transaction runs, kept when it commits, dropped when it rolls back.
///
/// Only the thread holding the store's write lock touches it (SQLite calls
/// the hooks on the thread that steps the statement), so it needs no lock.
/// What the store cannot see as rows — a clear (SQLite truncates a table
/// without visiting rows), an alter, a drop — is marked by the store itself.
///
/// It also writes the change feed (`ChangeFeed`): SQLite lets no hook write,
/// so the rows changed since the last feed write are folded apart and
/// written when the connection settles its transaction (`settle`), before
/// each COMMIT, RELEASE and SAVEPOINT; entries about to be deleted are
/// written first, while their record ids can still be read (`deleting`).
/// An upsert tells it each entry's record id as it writes the row
/// (`writing`), so the feed reads back only rows written otherwise.
final class ChangeCapture {
    private var open: [Int64: SoupDelta] = [:]
    private var committed: [(ChangeOrigin, [Int64: SoupDelta])] = []
    /// The origin of the writes under way; set by the store for each write.
    var origin = ChangeOrigin.app
    let feed: ChangeFeed
    private unowned let catalog: SoupCatalog
    /// Rows changed since the feed was last written, but for those changed
    /// while it is paused (rows a write already put in the feed, or changes
    /// that are no entry's).
    private var feedOpen: [Int64: SoupDelta] = [:]
    private var feedPaused = 0
    /// What `open` held when each savepoint still open began: a savepoint
    /// rolled back must not be heard at the outer commit.
    private var savepoints: [[Int64: SoupDelta]] = []
    /// Record ids of rows in `feedOpen` as their writer gave them (soup id
    /// -> entry id -> record id, .null for none), so the feed need not read
    /// them back; a row last written without one is read.
    private var feedRecordIds: [Int64: [Int64: JSON]] = [:]
    /// The soup and record id of the row being written (`writing`).
    private var announced: (soup: Int64, recordId: JSON)?

    init(feed: ChangeFeed, catalog: SoupCatalog) {
        self.feed = feed
        self.catalog = catalog
    }

    /// Installs the hooks on `c`; the capture must outlive the connection's
    /// use of them (the store keeps both and removes the hooks first).
    func install(on c: Connection) {
        c.changeCapture = self
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
        c.changeCapture = nil
        _ = c.api.update_hook(c.db, nil, nil)
        _ = c.api.commit_hook(c.db, nil, nil)
        _ = c.api.rollback_hook(c.db, nil, nil)
    }

    /// Made once: SQLite calls `row` for every row a write touches.
    private static let tablePrefix: [UInt8] = Array("TABLE_".utf8)

    /// The soup id of a soup's own table ("TABLE_12"), nil for any other
    /// table (full-text tables, Tureen's and the engines' tables).
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
        case 18:  // SQLITE_INSERT
            open[soup, default: SoupDelta()].inserted(rowid)
            if feedPaused == 0 {
                feedOpen[soup, default: SoupDelta()].inserted(rowid)
                keepRecordId(soup, rowid)
            }
        case 23:  // SQLITE_UPDATE
            open[soup, default: SoupDelta()].changed(rowid)
            if feedPaused == 0 {
                feedOpen[soup, default: SoupDelta()].changed(rowid)
                keepRecordId(soup, rowid)
            }
        case 9:  // SQLITE_DELETE
            open[soup, default: SoupDelta()].removed(rowid)
            if feedPaused == 0 {
                feedOpen[soup, default: SoupDelta()].removed(rowid)
                feedRecordIds[soup]?[rowid] = nil
            }
        default: break
        }
    }

    /// The record id the row now holds: the one announced for it, or
    /// unknown (to be read) when its writer gave none.
    private func keepRecordId(_ soup: Int64, _ rowid: Int64) {
        if let a = announced, a.soup == soup {
            announced = nil
            feedRecordIds[soup, default: [:]][rowid] = a.recordId
        } else {
            feedRecordIds[soup]?[rowid] = nil
        }
    }

    /// Runs `body`, which writes one row of soup `soupId` holding an entry
    /// whose record id is `recordId` (nil: none; see RecordIdFunction).
    func writing<T>(soup soupId: Int64, recordId: JSON?, _ body: () throws -> T) rethrows -> T {
        announced = (soupId, recordId ?? .null)
        defer { announced = nil }
        return try body()
    }

    /// Writes the feed rows of what changed since the last time, inside the
    /// transaction; the connection calls it before it commits, releases or
    /// opens a savepoint.
    func settle(_ c: Connection) throws {
        guard !feedOpen.isEmpty else { return }
        let pending = feedOpen
        let recordIds = feedRecordIds
        feedOpen = [:]
        feedRecordIds = [:]
        try feed.write(c, pending, recordIds: recordIds, origin: origin) { self.catalog.name(id: $0, c) }
        try feed.pruneIfDue(c)
    }

    /// A savepoint begins (after `settle`): what it changes can still be undone.
    func savepointBegan() { savepoints.append(open) }

    /// A savepoint released: its changes are the outer transaction's.
    func savepointReleased() { _ = savepoints.popLast() }

    /// A savepoint rolled back: what it changed is gone, for the listeners
    /// too, and everything before it was written to the feed when it began.
    func rolledBackToSavepoint() {
        if let before = savepoints.popLast() { open = before }
        feedOpen = [:]
        feedRecordIds = [:]
    }

    /// Runs `body`, which deletes entries of `soup` (those with `ids`; nil:
    /// all of them), after writing their feed rows.
    func deleting<T>(_ c: Connection, _ soup: Soup, ids: [Int64]?, _ body: () throws -> T) throws -> T {
        try settle(c)
        try feed.writeDeletes(c, soup: soup, ids: ids, origin: origin)
        feedPaused += 1
        defer { feedPaused -= 1 }
        return try body()
    }

    /// Runs `body`, whose row changes are no entry's (a reindex fills index
    /// columns), without feed rows.
    func withoutFeed<T>(_ c: Connection, _ body: () throws -> T) throws -> T {
        try settle(c)
        feedPaused += 1
        defer { feedPaused -= 1 }
        return try body()
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
        savepoints = []
        if !feedOpen.isEmpty {
            Log.write(.error, .store, "a commit changed entries the change feed did not record (a write outside a transaction)")
            feedOpen = [:]
        }
        feedRecordIds = [:]
    }

    private func rollback() {
        open = [:]
        feedOpen = [:]
        savepoints = []
        feedRecordIds = [:]
    }

    /// The transactions committed since the last call, oldest first.
    func takeCommitted() -> [(ChangeOrigin, [Int64: SoupDelta])] {
        defer { committed = [] }
        return committed
    }
}
