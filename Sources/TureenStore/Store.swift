import Glibc
import TureenCore

/// An open store: one SQLCipher database file in WAL mode.
///
/// Every method may be called from any thread; the store serialises access to
/// its connection.
public final class Store: @unchecked Sendable {
    // Unchecked: the writer and `options` change only under `lock`, the notifier under `notifierLock`, the owner under `ownerLock`; readers come from the pool.
    public let path: String
    let canonicalPath: String
    /// The file, absolute: the one readers open whatever the host's working
    /// directory is later.
    let absolutePath: String
    /// Where its blobs' files are, beside the file itself (not beside a
    /// link to it, nor relative to a working directory the host may change).
    let blobDirectory: BlobDirectory
    let api: SQLiteAPI
    var options: StoreOptions
    /// How messages spell the calls they send the reader to (see APICall);
    /// apart from `options`, which a rekey replaces under the write lock.
    public let callNames: CallNames
    /// Serialises writes (and lifecycle changes); held for a whole write.
    let lock = Lock()
    private var writer: Connection? {
        didSet {
            if let old = oldValue, old !== writer { ChangeCapture.uninstall(from: old) }
            if let new = writer, new !== oldValue {
                capture.install(on: new)
                checkpointer.install(on: new)
            }
        }
    }
    /// What the writer's transactions change, for listeners and the change feed.
    let capture: ChangeCapture
    /// Checkpoints the log beside the writer's commits, on a reader.
    let checkpointer: Checkpointer
    /// The thread that holds a transaction the host opened across calls
    /// (tureen_transaction_begin), which holds `lock` meanwhile.
    private let ownerLock = Lock()
    private var owner: pthread_t?
    /// Listeners and their thread, made with the first listener.
    let notifierLock = Lock()
    var notifierIfMade: Notifier?
    private let readers: ReaderPool
    /// Raised to stop the queries running now (interrupt, close).
    let interrupts = InterruptGeneration()
    let catalog = SoupCatalog()
    /// Set once the blob tables exist: they are made on first use.
    private let blobTablesLock = Lock()
    private var blobTablesMade = false
    var blobTablesReady: Bool {
        get { blobTablesLock.withLock { blobTablesMade } }
        set { blobTablesLock.withLock { blobTablesMade = newValue } }
    }
    /// The soups engines above the store keep their own data in, by name,
    /// with the sentence that says whose they are (Store+EngineSoups).
    let engineSoups = Locked<[String: String]>([:])
    static let readerLimit = 8
    /// Page cache per connection, in KiB.
    public static let cacheKiB = 8192

    /// The on-disk format this build writes; a newer one is refused on open.
    static let formatVersion: Int64 = 1

    private init(path: String, canonicalPath: String, api: SQLiteAPI, options: StoreOptions, writer: Connection) {
        self.path = path
        self.canonicalPath = canonicalPath
        absolutePath = StoreFile.absolute(path)
        blobDirectory = BlobDirectory(store: canonicalPath)
        self.api = api
        self.options = options
        callNames = options.callNames
        self.readers = ReaderPool(limit: Store.readerLimit, open: Store.opener(path: absolutePath, api: api, options: options))
        self.checkpointer = Checkpointer(api: api, readers: readers, path: path)
        self.capture = ChangeCapture(feed: ChangeFeed(keepMs: options.changesKeepMs, keepCount: options.changesKeepCount),
                                     catalog: catalog)
        self.writer = writer
        capture.install(on: writer)  // observers do not run in an initializer
        checkpointer.install(on: writer)
    }

    deinit { checkpointer.stop() }

    /// How a reader connection is made with `options`.
    static func opener(path: String, api: SQLiteAPI, options: StoreOptions) -> () throws -> Connection {
        { try Store.connect(path: path, api: api, options: options, existed: true) }
    }

    public static func open(path: String, options: StoreOptions) throws -> Store {
        guard !path.isEmpty else { throw TureenError.invalid("the store path is empty") }
        let api = try SQLCipherLibrary.api()
        let existed = StoreFile.exists(path)
        if StoreFile.isDirectory(path) {
            throw TureenError(.io, "cannot open '\(path)': it is a directory; give the path of a store file inside it")
        }
        if !existed {
            if !options.create { throw TureenError(.notFound, "no store at '\(path)' (and \"create\" is false)") }
            let dir = StoreFile.directory(of: path)
            if access(dir, F_OK) != 0 {
                throw TureenError(.io, "cannot create store '\(path)': directory '\(dir)' does not exist (creating it is the caller's job)")
            }
            if access(dir, W_OK) != 0 {
                throw TureenError(.io, "cannot create store '\(path)': directory '\(dir)' is not writable")
            }
        } else {
            // A rekey that died before its final rename leaves its copy behind;
            // the original is intact and authoritative.
            for f in StoreFile.rekeyLeftovers(of: path) { try StoreFile.unlinkIfPresent(f) }
        }
        let options = options.derivingKey(for: path, api: api)
        do {
            let conn = try connect(path: path, api: api, options: options, existed: existed)
            try ChangeFeed.createIfMissing(conn)
            let canonical = OpenStores.canonical(path)
            OpenStores.retain(canonical)
            let store = Store(path: path, canonicalPath: canonical, api: api, options: options, writer: conn)
            do {
                try store.resumeLongOperations()
            } catch {
                try? store.close()
                throw error
            }
            Log.write(.info, .store, "opened '\(path)' (\(options.isEncrypted ? "encrypted" : "not encrypted"))")
            return store
        } catch {
            // Never leave behind a file this call created and could not finish.
            if !existed {
                for f in [path] + StoreFile.suffixes.map({ path + $0 }) { try? StoreFile.unlinkIfPresent(f) }
            }
            throw error
        }
    }

    /// Opens, keys and checks one connection; the store is in WAL mode and has
    /// its metadata table when it returns.
    static func connect(path: String, api: SQLiteAPI, options: StoreOptions, existed: Bool) throws -> Connection {
        let conn = try Connection(path: path, api: api, create: options.create || !existed)
        if let key = options.keyBytes {
            try conn.setKey(key)
            if let n = options.effectiveKdfIter { try conn.execute("PRAGMA kdf_iter = \(n)") }
            try conn.execute("PRAGMA cipher_page_size = \(StoreFile.cipherPageSize)")
            guard (try? conn.scalarText("PRAGMA cipher_version")) ?? nil != nil else {
                throw TureenError(.internal, "the SQLite library in use cannot encrypt (PRAGMA cipher_version is empty); refusing to open '\(path)'")
            }
        } else if !existed {
            try conn.execute("PRAGMA page_size = \(StoreFile.cipherPageSize)")
        }
        conn.busyTimeout(ms: Int32(options.busyTimeoutMs))
        conn.callNames = options.callNames
        try IndexFunction.register(conn)
        try EntryFunction.register(conn)
        try PatternFunction.register(conn)
        try RecordIdFunction.register(conn)
        do {
            _ = try conn.scalarInt("SELECT count(*) FROM sqlite_master")
        } catch let e as TureenError where e.code == .key {
            throw explainUnreadable(path: path, options: options, header: conn.fileHeader())
        }
        let mode = try conn.scalarText("PRAGMA journal_mode = WAL")
        guard mode?.lowercased() == "wal" else {
            throw TureenError(.io, "cannot put '\(path)' in WAL mode (journal mode stays '\(mode ?? "?")')")
        }
        // NORMAL is durable against a process crash in WAL mode (the commit is
        // in the log before the call returns); only an OS crash or power loss
        // can lose the last commits, and never corrupts the store.
        try conn.execute("PRAGMA synchronous = NORMAL")
        try conn.execute("PRAGMA cache_size = -\(cacheKiB)")
        // The log grows past SQLite's usual 4 MB while the Checkpointer
        // catches up; this shrinks the file back when the log starts over.
        try conn.execute("PRAGMA journal_size_limit = \(Checkpointer.logBytesKept)")
        try checkOrCreateMeta(conn, path: path)
        // Page 1 of a new store sits in the WAL until a checkpoint; move it to
        // the main file so the plaintext check below reads what was written.
        if !existed { try conn.execute("PRAGMA wal_checkpoint(TRUNCATE)") }
        if options.isEncrypted && StoreFile.isPlaintextSQLite(conn.fileHeader()) {
            throw TureenError(.internal, "refusing to use '\(path)': it was written unencrypted although a key was given (a foreign SQLite is bound in this process)")
        }
        return conn
    }

    /// Says why SQLCipher could not read page 1, as precisely as the file lets us.
    static func explainUnreadable(path: String, options: StoreOptions, header: [UInt8]?) -> TureenError {
        let size = StoreFile.size(path) ?? 0
        if StoreFile.isPlaintextSQLite(header) {
            return TureenError(.key, options.isEncrypted
                ? "'\(path)' is an unencrypted SQLite database, not an encrypted Tureen store; it cannot be opened with a key"
                : "'\(path)' is not readable as an SQLite database")
        }
        if !options.isEncrypted {
            return TureenError(.key, "'\(path)' is encrypted or is not a database: open it with its key")
        }
        if size % Int64(StoreFile.cipherPageSize) != 0 {
            return TureenError(.key, "'\(path)' is not a Tureen store: its size (\(size) bytes) is not a whole number of pages, so it is no SQLCipher database")
        }
        return TureenError(.key, "wrong key, or '\(path)' is not a Tureen store (SQLCipher cannot tell these apart)")
    }

    static func checkOrCreateMeta(_ conn: Connection, path: String) throws {
        let hasMeta = try conn.scalarInt("SELECT count(*) FROM sqlite_master WHERE name = 'tureen_meta'") ?? 0
        if hasMeta == 0 {
            let others = try conn.scalarInt("SELECT count(*) FROM sqlite_master") ?? 0
            if others > 0 {
                throw TureenError(.key, "'\(path)' is a database of another application, not a Tureen store (it has no tureen_meta table)")
            }
            try conn.transaction {
                try conn.execute("CREATE TABLE IF NOT EXISTS tureen_meta (key TEXT PRIMARY KEY, value)")
                try conn.execute("INSERT OR IGNORE INTO tureen_meta VALUES ('format_version', \(formatVersion))")
                try SoupCatalog.createTables(conn)
            }
            return
        }
        let version = try conn.scalarInt("SELECT value FROM tureen_meta WHERE key = 'format_version'") ?? 0
        if version > formatVersion {
            throw TureenError(.key, "'\(path)' was written by a newer Tureen (store format \(version); this build reads up to \(formatVersion))")
        }
    }

    /// Runs `body` with the writing connection, one writer at a time, or
    /// fails with MISUSE once closed. What its transactions commit goes to
    /// listeners as `origin`'s changes. On the thread that holds a
    /// transaction opened across calls, `body` runs inside it, and its
    /// changes go out when that transaction commits.
    func withConnection<T>(origin: ChangeOrigin = .app, _ body: (Connection) throws -> T) throws -> T {
        if ownsTransaction {
            guard let c = writer else { throw TureenError.misuse("the store '\(path)' is closed") }
            try requireOpenTransaction(c)
            capture.origin = origin
            return try body(c)
        }
        return try lock.withLock {
            guard let c = writer else { throw TureenError.misuse("the store '\(path)' is closed") }
            capture.origin = origin
            defer { publishCommitted(c) }  // also after a throw: earlier commits stand
            return try body(c)
        }
    }

    /// Refuses a call inside the thread's transaction after SQLite rolled
    /// it back: a failure it cannot confine to the call that met it (disk
    /// full, an I/O error, out of memory while pages were written) ends the
    /// whole transaction. Run on its own, the call would commit at once,
    /// though the host takes it for part of a transaction it may still
    /// roll back.
    func requireOpenTransaction(_ c: Connection) throws {
        guard !c.inTransaction else { return }
        throw TureenError(.io, "the transaction this thread opened on the store '\(path)' was rolled back when an earlier call in it failed (disk full or an I/O error); nothing of it was written. Roll it back and start again")
    }

    /// True on the thread holding a transaction opened across calls.
    public var ownsTransaction: Bool {
        ownerLock.withLock { owner.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
    }

    func setOwner(_ t: pthread_t?) { ownerLock.withLock { owner = t } }

    /// Refuses what cannot run inside a transaction this thread opened
    /// across calls (it would wait for the write lock the thread holds).
    func refuseInTransaction(_ what: String) throws {
        if ownsTransaction {
            throw TureenError.misuse("\(what) cannot run inside the transaction this thread has open on the store '\(path)'; commit or roll it back first")
        }
    }

    /// Refuses to close while another thread has a transaction open across
    /// calls: once closed, its commit or rollback could not be called, and
    /// close would wait for the write lock that transaction holds, for ever.
    public func refuseCloseDuringOthersTransaction() throws {
        let elsewhere = ownerLock.withLock { owner.map { pthread_equal($0, pthread_self()) == 0 } ?? false }
        if elsewhere {
            throw TureenError.misuse("another thread has a transaction open on the store '\(path)': it must commit or roll back before the store closes")
        }
    }

    /// Frees the writer's page cache (PRAGMA shrink_memory), for after a
    /// write that went through more pages than it holds, such as a first
    /// sync down: it then holds the pages written last, of little use to
    /// what comes next, while a reader that scans the store fills its own
    /// cache beside it (8 MB more at 1,000,000 records,
    /// bench/bulk_sync_bench.py). Pages a later write needs are read again.
    /// A failure costs only the memory, so it is logged, not thrown.
    public func releaseWriterCache() {
        do {
            try withConnection { try $0.execute("PRAGMA shrink_memory") }
        } catch {
            Log.write(.warning, .store, "the writer's cache of '\(path)' could not be freed: \(error)")
        }
    }

    /// Runs read-only `body` on a reader connection, beside any write. When
    /// every reader is busy it waits for the writer instead.
    func withReader<T>(_ body: (Connection) throws -> T) throws -> T {
        // In a transaction of its own, a thread reads what it wrote.
        if ownsTransaction { return try withConnection(body) }
        guard let c = try readers.take() else { return try withConnection(body) }
        defer { readers.give(c) }
        return try body(c)
    }

    /// Runs a query's `body` on a reader, stopped when it outlives the
    /// store's query_timeout_ms or when `interruptQueries` is called.
    /// `connection`: run there instead, in the snapshot it has open.
    func withQuery<T>(on connection: Connection? = nil, _ body: (Connection) throws -> T) throws -> T {
        let started = Clock.nowMs()
        defer {
            let took = Clock.nowMs() - started
            if took >= Store.slowQueryMs { Log.write(.warning, .query, "a query on '\(path)' took \(took) ms") }
        }
        func limited(_ c: Connection) throws -> T {
            // One snapshot for the catalog check and the query: each
            // statement on its own would take and drop the WAL's read
            // lock again, and could see a different catalog.
            try c.snapshot {
                try c.limited(QueryLimit(interrupts), timeoutMs: options.queryTimeoutMs,
                              memoryBytes: queryMemoryBytes) { try body(c) }
            }
        }
        return try asQueryError {
            if let c = connection { return try limited(c) }
            return try withReader(limited)
        }
    }

    /// One query's memory budget in bytes (`query_memory_mb`; 0: none).
    var queryMemoryBytes: Int { options.queryMemoryMb << 20 }

    /// A query that takes longer is logged (a warning of category "query").
    static let slowQueryMs: Int64 = 500

    /// Stops every query running on this store now, wherever it runs; the
    /// queries started afterwards are not affected.
    public func interruptQueries() { interrupts.raise() }

    /// Waits for the reader connections in use and holds new readers back;
    /// the caller holds `lock`. Rekey needs the file to itself.
    func pauseReaders() { readers.pause() }

    /// Lets readers in again, keyed with `options`.
    func resumeReaders(options: StoreOptions) {
        readers.resume(open: Store.opener(path: absolutePath, api: api, options: options))
    }

    /// The connection, for a caller that already holds `lock`.
    func writerForRekey() -> Connection? { writer }
    var writerIfOpen: Connection? { writer }
    var writerIsOpen: Bool { writer != nil }

    /// Swaps the connection; the caller holds `lock`.
    func replaceWriter(with c: Connection?) { writer = c }

    /// Closes the store: queries running on other threads are interrupted,
    /// and close returns once every call in flight has returned. Closing
    /// twice is a MISUSE error, not a crash.
    public func close() throws {
        // A transaction this thread opened across calls is rolled back first.
        if ownsTransaction { try? rollbackTransaction() }
        notifierLock.withLock { notifierIfMade }?.shutdown()
        // Readers first, outside the write lock: a query running on the
        // writer (all readers busy) holds that lock and must be interrupted
        // before close can take it. No new read starts once the pool is shut.
        readers.close(stopRunning: interrupts.raise)
        checkpointer.stop()
        Fault.point("store.close.midway")
        try lock.withLock {
            guard let c = writer else { throw TureenError.misuse("the store '\(path)' is already closed") }
            // A checkpoint on close keeps the -wal file from growing across sessions.
            _ = try? c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            writer = nil
            OpenStores.release(canonicalPath)
            Log.write(.info, .store, "closed '\(path)'")
            if let n = notifierLock.withLock({ notifierIfMade }) { ChangeHub.leave(n, path: canonicalPath) }
            // Under the write lock: this handle publishes nothing more.
            ChangeHub.retire(path: canonicalPath, handle: ObjectIdentifier(self))
        }
    }

    /// Bytes the store takes on disk: the database file, its write-ahead
    /// log and its blob files.
    public func size() throws -> Int64 {
        try withConnection { _ in
            (StoreFile.size(absolutePath) ?? 0) + (StoreFile.size(absolutePath + "-wal") ?? 0) + blobDirectory.bytes()
        }
    }

    /// Deletes a closed store's file, its -wal, -shm and -journal
    /// companions and its blob directory.
    public static func remove(path: String) throws {
        guard !path.isEmpty else { throw TureenError.invalid("the store path is empty") }
        // Resolved while the file is there: its blobs are beside it.
        let canonical = OpenStores.canonical(path)
        if OpenStores.count(canonical) > 0 {
            throw TureenError.misuse("the store '\(path)' is open in this process; close it before removing it")
        }
        let existed = StoreFile.exists(path)
        for f in [path] + StoreFile.suffixes.map({ path + $0 }) + StoreFile.rekeyLeftovers(of: path) {
            try StoreFile.unlinkIfPresent(f)
        }
        // Through a link only the link goes: the file it named keeps its blobs.
        if !StoreFile.exists(canonical) { try BlobDirectory.removeAll(store: canonical) }
        if !existed { throw TureenError(.notFound, "no store at '\(path)'") }
    }
}
