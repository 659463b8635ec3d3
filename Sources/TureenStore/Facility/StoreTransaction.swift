import TureenCore

/// A transaction on the store as the engines above it hold it: they reach
/// soups (SoupTransaction), their side records and their own tables
/// through it, never SQL. A write transaction comes from
/// `withWriteTransaction`; a read one (`withReadTransaction`) sees one
/// reader's snapshot and is for reads only: the facility refuses to write
/// its tables there (the write would bypass the writer's lock and the
/// change capture).
public struct StoreTransaction {
    let connection: Connection
    let writes: Bool

    init(connection: Connection, writes: Bool = true) {
        self.connection = connection
        self.writes = writes
    }

    /// Fails inside a read transaction.
    func requireWrite(_ table: String) throws {
        guard writes else { throw TureenError.misuse("table \(table) cannot be written in a read transaction") }
    }
}

extension Store {
    /// Runs `body` in one immediate write transaction, without a soup;
    /// listeners hear of its changes as `origin`'s.
    public func withWriteTransaction<T>(origin: ChangeOrigin = .app, _ body: (StoreTransaction) throws -> T) throws -> T {
        try withConnection(origin: origin) { c in try c.transaction { try body(StoreTransaction(connection: c)) } }
    }

    /// Runs read-only `body` in one deferred transaction on a reader,
    /// beside any write (see `withReader`), so its reads see one snapshot.
    public func withReadTransaction<T>(_ body: (StoreTransaction) throws -> T) throws -> T {
        try withReader { c in try c.transaction(immediate: false) { try body(StoreTransaction(connection: c, writes: false)) } }
    }

    /// A SoupTransaction inside `t`, for a caller that changes several
    /// soups, or a soup and its side records, in one commit.
    public func soupTransaction(_ t: StoreTransaction, _ soupName: String, keyPath: String?) throws -> SoupTransaction {
        try SoupTransaction(t.connection, try catalog.soup(soupName, t.connection), keyPath: keyPath, writes: t.writes)
    }

    /// Removes every entry of soup `name` inside the caller's write transaction.
    public func clearSoup(_ t: StoreTransaction, _ name: String) throws {
        try t.requireWrite(name)
        try clearSoup(t.connection, name)
    }
}
