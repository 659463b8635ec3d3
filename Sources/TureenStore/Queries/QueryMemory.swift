import CQueryMemory
import TureenCore

/// How much memory one query may take from SQLite (`query_memory_mb`).
///
/// SQLite 3.15 has no hard heap limit: a recursive CTE under GROUP BY
/// reached 1.4 GB within its timeout, and `randomblob(900000000)` asked for
/// 900 MB in one call. Counting wrappers around SQLCipher's allocator
/// (CQueryMemory) refuse an allocation that would take the querying thread
/// past its budget; SQLite then fails the statement with SQLITE_NOMEM and
/// frees what it held, and the connection stays usable.
enum QueryMemory {
    /// Installs the wrappers; false when SQLCipher was initialized before
    /// Tureen loaded it (a host that uses libsqlcipher itself), and then no
    /// budget applies.
    static func install(config: UnsafeMutableRawPointer) -> Bool {
        cquerymemory_install(config) == 0
    }

    /// Runs `body` with at most `bytes` of SQLite memory on this thread (0:
    /// no limit); past it the query fails with a message naming the option.
    static func bounded<T>(_ bytes: Int, installed: Bool, _ body: () throws -> T) throws -> T {
        guard bytes > 0, installed else { return try body() }
        cquerymemory_begin(Int64(bytes))
        do {
            let r = try body()
            _ = cquerymemory_end()
            return r
        } catch {
            if cquerymemory_end() != 0 { throw exceeded(bytes) }
            throw error
        }
    }

    /// Throws once a page being written passes the budget (0: none).
    /// SQLite holds one row at a time, however large the rows are (large
    /// entries, or randomblob in Smart SQL), while the page holds them all:
    /// a page of a million entries of 1 MB would take a terabyte.
    static func holdPage(_ bytes: Int, to budget: Int, of what: String = "the query") throws {
        if budget > 0 && bytes > budget { throw exceeded(budget, what) }
    }

    static func exceeded(_ bytes: Int, _ what: String = "the query") -> TureenError {
        TureenError(.query, "\(what) needed more memory than query_memory_mb (\(bytes >> 20) MiB) allows and was stopped")
    }
}
