import Glibc

/// An open store: one SQLCipher database file in WAL mode.
///
/// Every method may be called from any thread; the store serialises access to
/// its connection.
public final class Store: @unchecked Sendable {
    public let path: String
    let canonicalPath: String
    let api: SQLiteAPI
    var options: StoreOptions
    /// Serialises writes (and lifecycle changes); held for a whole write.
    let lock = Lock()
    private var writer: Connection?
    /// Guards `readers`, which rekey replaces; never held across a read.
    private let poolLock = Lock()
    private var readers: ReaderPool
    let catalog = SoupCatalog()
    static let readerLimit = 8
    /// Page cache per connection, in KiB.
    static let cacheKiB = 8192

    /// The on-disk format this build writes; a newer one is refused on open.
    static let formatVersion: Int64 = 1

    private init(path: String, canonicalPath: String, api: SQLiteAPI, options: StoreOptions, writer: Connection) {
        self.path = path
        self.canonicalPath = canonicalPath
        self.api = api
        self.options = options
        self.writer = writer
        self.readers = Store.makePool(path: path, api: api, options: options)
    }

    static func makePool(path: String, api: SQLiteAPI, options: StoreOptions) -> ReaderPool {
        ReaderPool(limit: readerLimit) {
            try Store.connect(path: path, api: api, options: options, existed: true)
        }
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
        let options = options.derivingKey(for: path)
        do {
            let conn = try connect(path: path, api: api, options: options, existed: existed)
            let canonical = OpenStores.canonical(path)
            OpenStores.retain(canonical)
            let store = Store(path: path, canonicalPath: canonical, api: api, options: options, writer: conn)
            do {
                try store.resumeLongOperations()
            } catch {
                try? store.close()
                throw error
            }
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
        try IndexFunction.register(conn)
        try EntryFunction.register(conn)
        do {
            _ = try conn.scalarInt("SELECT count(*) FROM sqlite_master")
        } catch let e as TureenError where e.code == .key {
            throw explainUnreadable(path: path, options: options)
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
        try checkOrCreateMeta(conn, path: path)
        // Page 1 of a new store sits in the WAL until a checkpoint; move it to
        // the main file so the plaintext check below reads what was written.
        if !existed { try conn.execute("PRAGMA wal_checkpoint(TRUNCATE)") }
        if options.isEncrypted && StoreFile.isPlaintextSQLite(path) {
            throw TureenError(.internal, "refusing to use '\(path)': it was written unencrypted although a key was given (a foreign SQLite is bound in this process)")
        }
        return conn
    }

    /// Says why SQLCipher could not read page 1, as precisely as the file lets us.
    static func explainUnreadable(path: String, options: StoreOptions) -> TureenError {
        let size = StoreFile.size(path) ?? 0
        if StoreFile.isPlaintextSQLite(path) {
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
    /// fails with MISUSE once closed.
    public func withConnection<T>(_ body: (Connection) throws -> T) throws -> T {
        try lock.withLock {
            guard let c = writer else { throw TureenError.misuse("the store '\(path)' is closed") }
            return try body(c)
        }
    }

    /// Runs read-only `body` on a reader connection, beside any write. When
    /// every reader is busy it waits for the writer instead.
    public func withReader<T>(_ body: (Connection) throws -> T) throws -> T {
        let pool = poolLock.withLock { readers }
        guard let c = try pool.take() else { return try withConnection(body) }
        defer { pool.give(c) }
        return try body(c)
    }

    /// Drops every reader connection; the caller holds `lock`. Rekey needs the
    /// file to itself, and after it the readers must use the new key.
    func resetReaders(options: StoreOptions) {
        poolLock.withLock {
            readers.close()
            readers = Store.makePool(path: path, api: api, options: options)
        }
    }

    /// The connection, for a caller that already holds `lock`.
    func writerForRekey() -> Connection? { writer }

    /// Swaps the connection; the caller holds `lock`.
    func replaceWriter(with c: Connection?) { writer = c }

    /// Closes the store. Closing twice is a MISUSE error, not a crash.
    public func close() throws {
        try lock.withLock {
            guard let c = writer else { throw TureenError.misuse("the store '\(path)' is already closed") }
            // A checkpoint on close keeps the -wal file from growing across sessions.
            _ = try? c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            writer = nil
            poolLock.withLock { readers.close() }
            OpenStores.release(canonicalPath)
        }
    }

    /// Bytes the store takes on disk: the database file plus its write-ahead log.
    public func size() throws -> Int64 {
        try withConnection { _ in
            (StoreFile.size(path) ?? 0) + (StoreFile.size(path + "-wal") ?? 0)
        }
    }

    /// Deletes a closed store's file and its -wal, -shm and -journal companions.
    public static func remove(path: String) throws {
        guard !path.isEmpty else { throw TureenError.invalid("the store path is empty") }
        if OpenStores.count(OpenStores.canonical(path)) > 0 {
            throw TureenError.misuse("the store '\(path)' is open in this process; close it before removing it")
        }
        let existed = StoreFile.exists(path)
        for f in [path] + StoreFile.suffixes.map({ path + $0 }) + StoreFile.rekeyLeftovers(of: path) {
            try StoreFile.unlinkIfPresent(f)
        }
        if !existed { throw TureenError(.notFound, "no store at '\(path)'") }
    }
}
