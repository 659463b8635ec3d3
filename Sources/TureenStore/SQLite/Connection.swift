import CSQLCipher
import TureenCore

/// One SQLCipher connection. Not thread-safe: the store hands each connection
/// to one thread at a time.
final class Connection {
    let api: SQLiteAPI
    let db: OpaquePointer
    let path: String

    /// Opens without reading anything: SQLCipher only notices a wrong key at
    /// the first read, which `Store` performs after keying.
    init(path: String, api: SQLiteAPI, create: Bool) throws {
        self.api = api
        self.path = path
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_NOMUTEX
        let rc = api.open_v2(path, &handle, flags, nil)
        guard rc == SQLITE_OK, let h = handle else {
            if let h = handle { _ = api.close_v2(h) }
            throw TureenError(.io, "cannot open store file '\(path)': \(Connection.describe(rc, api: api)) "
                + "(the directory must exist and be writable)")
        }
        db = h
        _ = api.extended_result_codes(db, 1)
    }

    deinit {
        pageStatements.removeAll()
        statementCache.removeAll()
        literalStatements.removeAll()
        frequentStatements.removeAll()
        engineStatements.removeAll()
        _ = api.close_v2(db)
    }

    static func describe(_ rc: Int32, api: SQLiteAPI) -> String {
        api.errstr(rc).map { String(cString: $0) } ?? "SQLite error \(rc)"
    }

    var lastMessage: String {
        api.errmsg(db).map { String(cString: $0) } ?? "unknown SQLite error"
    }

    /// Copies the value of `column` in row `row` of `table` into `buffer`
    /// with SQLite's incremental blob I/O: its pages go straight into the
    /// buffer, where a SELECT first assembles the value in memory of its
    /// own (one copy of every byte fewer, for blob export). Returns the
    /// value's length (nothing is read when it is longer than the buffer),
    /// or nil when the row is not there.
    func readBlob(table: String, column: String, row: Int64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int? {
        var handle: OpaquePointer?
        let rc = api.blob_open(db, "main", table, column, row, 0, &handle)
        defer { _ = api.blob_close(handle) }
        guard rc == SQLITE_OK, let h = handle else {
            if rc & 0xFF == SQLITE_ERROR && lastMessage.hasPrefix("no such rowid") { return nil }
            throw error(rc, "reading \(table) row \(row)")
        }
        let n = Int(api.blob_bytes(h))
        guard n <= buffer.count else { return n }
        let read = api.blob_read(h, buffer.baseAddress, Int32(n), 0)
        guard read == SQLITE_OK else { throw error(read, "reading \(table) row \(row)") }
        return n
    }

    /// Maps an SQLite result code to a Tureen error, naming what was being done.
    func error(_ rc: Int32, _ doing: String) -> TureenError {
        Connection.error(rc, doing, api: api, db: db, path: path)
    }

    static func error(_ rc: Int32, _ doing: String, api: SQLiteAPI, db: OpaquePointer, path: String) -> TureenError {
        let lastMessage = api.errmsg(db).map { String(cString: $0) } ?? "unknown SQLite error"
        let message = "\(doing): \(lastMessage)"
        switch rc & 0xFF {
        case SQLITE_NOTADB: return TureenError(.key, "\(doing): wrong key, or '\(path)' is not a Tureen store")
        case SQLITE_CORRUPT: return TureenError(.corrupt, "\(doing): the store '\(path)' is damaged (\(lastMessage))")
        case SQLITE_IOERR, SQLITE_FULL, SQLITE_CANTOPEN, SQLITE_READONLY, SQLITE_PERM:
            return TureenError(.io, "\(message) (file '\(path)')")
        case SQLITE_BUSY, SQLITE_LOCKED: return TureenError(.busy, "\(message) (another connection holds a lock on '\(path)')")
        case SQLITE_CONSTRAINT: return TureenError(.constraint, message)
        case SQLITE_INTERRUPT: return TureenError(.cancelled, message)
        default: return TureenError(.internal, message)
        }
    }

    func setKey(_ key: [UInt8]) throws {
        let rc = key.withUnsafeBytes { api.key(db, $0.baseAddress, Int32($0.count)) }
        if rc != SQLITE_OK { throw error(rc, "setting the key") }
    }

    /// How this connection waits for a lock another holds (see BusyWait);
    /// kept here, as SQLite holds only a pointer to it.
    private var busyWait: BusyWait?
    /// How this connection's messages spell the calls they name (the store's).
    var callNames = CallNames.swift

    func busyTimeout(ms: Int32) {
        let wait = BusyWait(ms: Int(ms))
        busyWait = wait
        _ = api.busy_handler(db, BusyWait.handler, Unmanaged.passUnretained(wait).toOpaque())
    }

    /// By the SQL's bytes (ExactString): two texts that differ only in the
    /// normalisation of a literal are two queries, not one.
    private var statementCache: [ExactString: Statement] = [:]
    /// By the address of their literal text (see `cached(literal:)`): as
    /// many as the code has, so never emptied.
    private var literalStatements: [UInt: Statement] = [:]
    private var frequentStatements = [Statement?](repeating: nil, count: FrequentStatement.allCases.count)
    /// The engines' statements on their tables, by what they do (see
    /// `EngineStatementKey`), with the table: as few as the engines' calls,
    /// so never emptied.
    var engineStatements: [EngineStatementKey: (owner: AnyObject, statement: Statement)] = [:]

    /// Prepared pages of index queries by shape (see `QueryShape`); emptied
    /// when it grows past `pageStatementLimit`, like the statement cache.
    var pageStatements: [QueryShape: Statement] = [:]
    static let pageStatementLimit = 64

    /// Smart SQL already checked on this connection (translated text, its
    /// wrapped form and its parameter count), so a repeated query is
    /// prepared once, not checked again each call.
    var checkedSmartSQL: [ExactString: (wrapped: String, parameters: Int)] = [:]

    /// A prepared statement kept for the connection's life, reset and ready.
    /// The caller must reset it when done (an unreset SELECT pins a snapshot).
    func cached(_ sql: String) throws -> Statement {
        let key = ExactString(sql)
        if let s = statementCache[key] {
            s.reset()
            return s
        }
        let s = try prepare(sql)
        if statementCache.count > 200 { statementCache.removeAll() }
        statementCache[key] = s
        return s
    }

    /// The same for SQL written into the code: found by the address of its
    /// text, which a literal keeps for the process's life, instead of by
    /// hashing the text. Sync down runs some once per record, and finding
    /// each by its text took 1,600 instructions.
    func cached(literal sql: StaticString) throws -> Statement {
        // A one-character literal may be held as a scalar, with no address.
        guard sql.hasPointerRepresentation else { return try cached(sql.description) }
        let key = UInt(bitPattern: sql.utf8Start)
        if let s = literalStatements[key] {
            s.reset()
            return s
        }
        let s = try prepare(sql.description)
        literalStatements[key] = s
        return s
    }

    /// One of the statements every call runs, kept for the connection's
    /// life, reset and ready; the caller must reset it when done, as with
    /// `cached`.
    func frequent(_ f: FrequentStatement) throws -> Statement {
        if let s = frequentStatements[f.rawValue] {
            s.reset()
            return s
        }
        let s = try prepare(f.sql)
        frequentStatements[f.rawValue] = s
        return s
    }

    /// Prepares the first statement of `sql`; says whether more follow and
    /// how many bytes of `sql` the first one took.
    func prepareFirst(_ sql: String) throws -> (Statement, more: Bool, length: Int) {
        var utf8 = Array(sql.utf8CString)
        return try utf8.withUnsafeMutableBufferPointer { buf in
            var stmt: OpaquePointer?
            var tail: UnsafePointer<CChar>?
            let base = UnsafePointer(buf.baseAddress!)
            let rc = api.prepare_v2(db, base, -1, &stmt, &tail)
            guard rc == SQLITE_OK else { throw error(rc, "preparing SQL") }
            guard let s = stmt else { throw TureenError(.query, "the SQL holds no statement") }
            var more = false
            if let t = tail, t.pointee != 0 {
                var next: OpaquePointer?
                let rc2 = api.prepare_v2(db, t, -1, &next, nil)
                if rc2 != SQLITE_OK || next != nil { more = true }
                if let n = next { _ = api.finalize(n) }
            }
            let length = tail.map { base.distance(to: $0) } ?? buf.count - 1
            return (Statement(api: api, db: db, path: path, stmt: s), more, length)
        }
    }

    /// The store's capture, on its writer only: the change feed's rows are
    /// written as this connection's transactions settle (`transaction`).
    weak var changeCapture: ChangeCapture?
    /// True while a transaction the host opened across calls is open on
    /// this connection (Store.beginTransaction): a statement that fails
    /// there must undo only itself, which needs SQLite's statement journal.
    var inHostTransaction = false

    /// Nesting depth of `readOnly`: the authorizer goes when the outermost ends.
    private var readOnlyDepth = 0

    /// Runs `body` (which prepares and steps statements) with an authorizer
    /// that lets SQL only read: SELECT, reading columns, functions, recursive
    /// CTEs. Writes, PRAGMA, ATTACH and the rest fail to prepare. It stays on
    /// while the statements step, because SQLite consults it whenever SQL is
    /// prepared: a function that runs SQL of its own while a row is computed
    /// (sqlcipher_export does) and a statement re-prepared after a schema
    /// change are held to the same rule.
    func readOnly<T>(_ body: () throws -> T) throws -> T {
        if readOnlyDepth == 0 { _ = api.set_authorizer(db, Connection.readOnly, nil) }
        readOnlyDepth += 1
        defer {
            readOnlyDepth -= 1
            if readOnlyDepth == 0 { _ = api.set_authorizer(db, nil, nil) }
        }
        return try body()
    }

    /// The limit of the query running now, for work SQLite does inside one
    /// step, where its progress handler cannot stop it (`PatternFunction`).
    private(set) var queryLimit: QueryLimit?

    /// The LIKE or GLOB pattern matched last on this connection: a query
    /// matches one pattern against every row, and compiling it each time
    /// showed in a LIKE count.
    var lastPattern: PatternMatch?

    /// Runs a query's `body` under `limit`: SQLite's progress handler stops
    /// it past `timeoutMs` (0: never) or when the store's queries are
    /// interrupted, `QueryMemory` past `memoryBytes` (0: no limit), and the
    /// error then says which.
    func limited<T>(_ limit: QueryLimit, timeoutMs: Int, memoryBytes: Int, _ body: () throws -> T) throws -> T {
        limit.arm(timeoutMs: timeoutMs)
        api.progress_handler(db, QueryLimit.stepsPerCheck, Connection.progress, Unmanaged.passUnretained(limit).toOpaque())
        queryLimit = limit
        defer {
            api.progress_handler(db, 0, nil, nil)
            queryLimit = nil
        }
        do {
            return try QueryMemory.bounded(memoryBytes, installed: api.queryMemoryBudget, body)
        } catch {
            switch limit.stop {
            case .timedOut:
                throw TureenError(.query, "the query ran longer than query_timeout_ms (\(timeoutMs) ms) and was stopped")
            case .interrupted:
                throw TureenError(.cancelled, "the query was interrupted (\(callNames[.storeInterrupt]), or the store is closing)")
            case .none:
                throw error
            }
        }
    }

    private static let progress: SQLiteAPI.ProgressHandler = { ctx in
        guard let ctx = ctx else { return 0 }
        return Unmanaged<QueryLimit>.fromOpaque(ctx).takeUnretainedValue().shouldStop() ? 1 : 0
    }

    private static let readOnly: SQLiteAPI.Authorizer = { _, action, arg1, arg2, _, _ in
        func text(_ p: UnsafePointer<CChar>?) -> String { p.map { String(cString: $0).lowercased() } ?? "" }
        switch action {
        case 21, 33: return 0  // SQLITE_SELECT, SQLITE_RECURSIVE
        case 20:  // SQLITE_READ: soup tables only, not Tureen's or SQLite's own
            let table = text(arg1)
            if table == "sqlite_master" && text(arg2) == "rowid" { return 0 }  // FTS4 connecting: see below
            return table.hasPrefix("tureen_") || table.hasPrefix("sqlite_") ? 1 : 0
        // FTS4 connects a soup's full-text table on the first statement of a
        // connection that names it, inside that statement's prepare: it reads
        // the page size, and declaring its columns compiles (never runs) an
        // UPDATE of sqlite_master by rowid. Allowed, or Smart SQL naming the
        // table fails there. Nothing a caller writes gets through with them:
        // PRAGMA cannot stand inside the SELECT that wraps Smart SQL, a write
        // is refused as not read-only, SQLite lets no statement of a caller's
        // write sqlite_master, and reading it is refused by its plan
        // (`Store.refuseInternalReads`).
        case 19:  // SQLITE_PRAGMA
            return text(arg1) == "page_size" && arg2 == nil ? 0 : 1
        case 23:  // SQLITE_UPDATE
            return text(arg1) == "sqlite_master" ? 0 : 1
        case 31:  // SQLITE_FUNCTION: not those that reach into the process or write
            let f = text(arg2)
            return f == "fts3_tokenizer" || f == "load_extension" || f.hasPrefix("sqlcipher") ? 1 : 0
        default: return 1  // SQLITE_DENY
        }
    }

    /// A PASSIVE checkpoint of the main database: copies what no reader
    /// still needs and waits for nothing. Another checkpoint running
    /// (SQLITE_BUSY) is no failure: the log waits for the next one.
    func checkpointPassive() { Connection.checkpointPassive(db, api: api, path: path) }

    /// The same on `db` of the store at `path`, for the WAL hook, which has
    /// the handle only. A failure is logged, not thrown: the commit that
    /// asked stands, and nothing is lost but the copy, which the next
    /// checkpoint makes.
    static func checkpointPassive(_ db: OpaquePointer, api: SQLiteAPI, path: String) {
        let rc = api.wal_checkpoint_v2(db, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
        if rc != SQLITE_OK && rc != SQLITE_BUSY && rc != SQLITE_LOCKED {
            Log.write(.warning, .store, "a checkpoint of '\(path)' failed: \(error(rc, "checkpointing", api: api, db: db, path: path).message)")
        }
    }

    func prepare(_ sql: String) throws -> Statement {
        var stmt: OpaquePointer?
        let rc = api.prepare_v2(db, sql, -1, &stmt, nil)
        guard rc == SQLITE_OK, let s = stmt else { throw error(rc, "preparing SQL") }
        return Statement(api: api, db: db, path: path, stmt: s)
    }

    /// Runs statements that return no rows the caller needs.
    func execute(_ sql: String) throws {
        let s = try prepare(sql)
        while try s.step() {}
    }

    /// The first column of the first row, as text; nil when there is no row.
    func scalarText(_ sql: String) throws -> String? {
        let s = try prepare(sql)
        return try s.step() ? s.text(0) : nil
    }

    func scalarInt(_ sql: String) throws -> Int64? {
        let s = try prepare(sql)
        return try s.step() ? s.int64(0) : nil
    }

    var changes: Int { Int(api.changes(db)) }
    var lastInsertRowid: Int64 { api.last_insert_rowid(db) }
    var inTransaction: Bool { api.get_autocommit(db) == 0 }

    /// The catalog version in this connection's snapshot (`snapshot`); nil
    /// outside one.
    private(set) var snapshotCatalogVersion: Int64?

    /// The catalog version this connection read last, with what says it
    /// still holds: SQLite's data version then, which other connections'
    /// commits move, and this connection's own count of changes then,
    /// which its own writes (a catalog change among them) move.
    private var knownCatalog: (version: Int64, dataVersion: Int64, ownChanges: Int32)?

    /// Runs read-only `body` in one snapshot of the store, without BEGIN and
    /// COMMIT: those two cost a short query about a tenth of its own work.
    /// SQLite keeps a connection's read transaction open while any of its
    /// statements stands between a row and its reset, so the data version
    /// statement, left on its row, holds the snapshot for every statement
    /// `body` runs. The catalog version is read again only when the data
    /// version or this connection's changes moved: looking it up in
    /// tureen_meta on every query cost an exact page 3,000 instructions
    /// beyond what the pragma, which begins the read the same way, costs.
    /// In a transaction, or a snapshot, already open it only runs `body`.
    func snapshot<T>(_ body: () throws -> T) throws -> T {
        if inTransaction || snapshotCatalogVersion != nil { return try body() }
        let pin = try frequent(.dataVersion)
        defer {
            snapshotCatalogVersion = nil
            pin.reset()
        }
        guard try pin.step() else { throw TureenError(.internal, "reading the data version gave no row") }
        let dataVersion = pin.int64(0)
        let ownChanges = api.total_changes(db)
        if let known = knownCatalog, known.dataVersion == dataVersion, known.ownChanges == ownChanges {
            snapshotCatalogVersion = known.version
        } else {
            let read = try frequent(.catalogVersion)
            defer { read.reset() }
            guard try read.step() else { throw TureenError(.internal, "reading the catalog version gave no row") }
            knownCatalog = (read.int64(0), dataVersion, ownChanges)
            snapshotCatalogVersion = read.int64(0)
        }
        return try body()
    }

    /// Runs `body` in one transaction: committed when it returns, rolled back
    /// when it throws, so a failure leaves nothing half-written. Inside a
    /// transaction already open (one the host opened across calls) it is a
    /// savepoint: its work stands or falls with the outer transaction.
    func transaction<T>(immediate: Bool = true, _ body: () throws -> T) throws -> T {
        if inTransaction {
            try changeCapture?.settle(self)
            try control(.savepoint)
            changeCapture?.savepointBegan()
            do {
                let r = try body()
                try changeCapture?.settle(self)
                try control(.release)
                changeCapture?.savepointReleased()
                return r
            } catch {
                _ = try? control(.rollbackToSavepoint)
                changeCapture?.rolledBackToSavepoint()
                _ = try? control(.release)
                throw error
            }
        }
        try control(immediate ? .beginImmediate : .begin)
        do {
            let r = try body()
            try changeCapture?.settle(self)
            if immediate { try Fault.point("store.commit", failing: .io) }
            try control(.commit)
            if immediate { Fault.point("store.committed") }
            return r
        } catch {
            if inTransaction { try? control(.rollback) }
            throw error
        }
    }

    /// Runs a transaction-control statement, prepared once per connection:
    /// every call of the store begins and ends a transaction, and preparing
    /// them each time showed beside a short query.
    private func control(_ f: FrequentStatement) throws {
        let s = try frequent(f)
        defer { s.reset() }
        while try s.step() {}
    }
}

/// A prepared statement, finalized when released. It does not reference its
/// Connection: the connection's statement cache holds statements, and a
/// reference back would keep both alive, and the database open, forever.
final class Statement {
    let api: SQLiteAPI
    let db: OpaquePointer
    let path: String
    let stmt: OpaquePointer

    init(api: SQLiteAPI, db: OpaquePointer, path: String, stmt: OpaquePointer) {
        self.api = api
        self.db = db
        self.path = path
        self.stmt = stmt
    }

    deinit { _ = api.finalize(stmt) }

    static let emptyText: StaticString = ""

    /// Steps once: true when a row is ready, false when done.
    /// Set when a bound value was too large to bind; the next step fails.
    private var oversized = false

    private func length(_ n: Int) -> Int32? {
        guard let v = Int32(exactly: n) else { oversized = true; return nil }
        return v
    }

    @discardableResult
    func step() throws -> Bool {
        if oversized {
            oversized = false
            _ = api.reset(stmt)
            throw TureenError.invalid("a value is larger than 2 GiB, more than SQLite can store")
        }
        let rc = api.step(stmt)
        if rc == SQLITE_ROW { return true }
        if rc == SQLITE_DONE { return false }
        let e = Connection.error(rc, "running SQL", api: api, db: db, path: path)
        _ = api.reset(stmt)
        throw e
    }

    func reset() {
        oversized = false
        _ = api.reset(stmt)
        _ = api.clear_bindings(stmt)
    }

    var isReadOnly: Bool { api.stmt_readonly(stmt) != 0 }
    var parameterCount: Int { Int(api.bind_parameter_count(stmt)) }
    var columnCount: Int { Int(api.column_count(stmt)) }

    func bind(_ i: Int, _ v: Int64) { _ = api.bind_int64(stmt, Int32(i), v) }
    func bind(_ i: Int, _ v: Double) { _ = api.bind_double(stmt, Int32(i), v) }
    func bindNull(_ i: Int) { _ = api.bind_null(stmt, Int32(i)) }
    func bind(_ i: Int, _ v: String) {
        var v = v
        v.withUTF8 { bind(i, utf8: $0) }
    }

    /// Binds UTF-8 text, copied by SQLite before the call returns.
    func bind(_ i: Int, utf8 b: UnsafeBufferPointer<UInt8>) {
        bindText(i, b, SQLiteAPI.transient)
    }

    /// Binds UTF-8 text without copying it (SQLITE_STATIC): it must stay
    /// valid until the statement is stepped and reset. For an entry's text,
    /// where a copy per row showed in profiles.
    func bind(_ i: Int, borrowedText b: UnsafeBufferPointer<UInt8>) {
        bindText(i, b, nil)
    }

    private func bindText(_ i: Int, _ b: UnsafeBufferPointer<UInt8>, _ destructor: (@convention(c) (UnsafeMutableRawPointer?) -> Void)?) {
        // An empty buffer may have no address; SQLite reads a NULL pointer
        // as SQL NULL, so give it a real (empty) string instead.
        let base = UnsafeRawPointer(b.baseAddress ?? Statement.emptyText.utf8Start)
        guard let n = length(b.count) else { return }
        _ = api.bind_text(stmt, Int32(i), base.assumingMemoryBound(to: CChar.self), n, destructor)
    }

    /// Binds bytes as a BLOB without copying them (SQLITE_STATIC): they
    /// must stay valid until the statement is stepped and reset.
    func bind(_ i: Int, blob b: UnsafeRawBufferPointer) {
        guard let n = length(b.count) else { return }
        // An empty buffer may have no address, which SQLite would bind as NULL.
        _ = api.bind_blob(stmt, Int32(i), b.baseAddress ?? UnsafeRawPointer(Statement.emptyText.utf8Start), n, nil)
    }

    func columnType(_ col: Int) -> Int32 { api.column_type(stmt, Int32(col)) }
    func int64(_ col: Int) -> Int64 { api.column_int64(stmt, Int32(col)) }
    func double(_ col: Int) -> Double { api.column_double(stmt, Int32(col)) }
    func text(_ col: Int) -> String? {
        guard let p = api.column_text(stmt, Int32(col)) else { return nil }
        let n = Int(api.column_bytes(stmt, Int32(col)))
        return String(decoding: UnsafeBufferPointer(start: p, count: n), as: UTF8.self)
    }
    /// The column's text as bytes valid until the next step or reset.
    func textBytes(_ col: Int) -> UnsafeBufferPointer<UInt8> {
        guard let p = api.column_text(stmt, Int32(col)) else { return UnsafeBufferPointer(start: nil, count: 0) }
        return UnsafeBufferPointer(start: p, count: Int(api.column_bytes(stmt, Int32(col))))
    }
    func blobBytes(_ col: Int) -> UnsafeRawBufferPointer {
        guard let p = api.column_blob(stmt, Int32(col)) else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        return UnsafeRawBufferPointer(start: p, count: Int(api.column_bytes(stmt, Int32(col))))
    }

}
