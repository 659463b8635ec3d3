import CSQLCipher
import TureenCore

/// The database file's first bytes as they are on disk, read through
/// SQLite's own file handle.
///
/// Reading them with open(2) and close(2) is not safe while SQLite has the
/// file open in this process: POSIX locks belong to the process, and closing
/// any descriptor of the file drops all of them. Another process then
/// believes it is the file's last user, checkpoints and deletes the WAL on
/// close, and this process goes on writing into a log nobody else reads:
/// its commits are lost to every other process. SQLite's own handle (and a
/// connection closed while others hold locks, whose descriptor SQLite keeps
/// until they are released) never drops a lock.
extension Connection {
    static let headerLength = 16

    /// The first 16 bytes of the main database file; nil when the file is
    /// shorter (a new store, whose first page is still in the WAL).
    func fileHeader() -> [UInt8]? {
        var file: UnsafeMutablePointer<sqlite3_file>?
        guard api.file_control(db, "main", SQLITE_FCNTL_FILE_POINTER, &file) == SQLITE_OK,
              let f = file, let read = f.pointee.pMethods?.pointee.xRead else { return nil }
        var buf = [UInt8](repeating: 0, count: Connection.headerLength)
        let rc = buf.withUnsafeMutableBytes { read(f, $0.baseAddress, Int32(Connection.headerLength), 0) }
        return rc == SQLITE_OK ? buf : nil
    }

    /// The header of the file at `path`, through a connection of its own
    /// that only reads it; nil when there is no such file or it is short.
    static func fileHeader(path: String, api: SQLiteAPI) -> [UInt8]? {
        guard StoreFile.exists(path), let c = try? Connection(path: path, api: api, create: false) else { return nil }
        return c.fileHeader()
    }
}
