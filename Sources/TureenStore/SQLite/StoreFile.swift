import Glibc
import TureenCore

/// What is on disk at a store's path, looked at without SQLite: used to tell a
/// wrong key from a file that is no database, and to remove a store. The
/// file's contents are read through SQLite (Connection.fileHeader), never
/// with a descriptor of our own, which would drop SQLite's locks.
enum StoreFile {
    static let suffixes = ["-wal", "-shm", "-journal"]
    static let rekeySuffix = "-tureen-rekey"

    /// The rekey copy and every companion SQLite may have made for it.
    static func rekeyLeftovers(of path: String) -> [String] {
        let copy = path + rekeySuffix
        return [copy] + suffixes.map { copy + $0 }
    }
    static let plainHeader = Array("SQLite format 3\0".utf8)
    /// The page size of every encrypted store. SQLCipher 3 defaults to 1 KiB,
    /// which splits a 1 KB entry over overflow pages and quadruples the page
    /// encryptions and system calls. SQLCipher does not record it in the file,
    /// so like kdf_iter it can never change. An encrypted file is a whole
    /// number of pages.
    static let cipherPageSize = 4096

    static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    static func isDirectory(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
    }

    static func size(_ path: String) -> Int64? {
        var st = stat()
        return stat(path, &st) == 0 ? Int64(st.st_size) : nil
    }

    /// Whether a file header (see Connection.fileHeader) is plain SQLite's.
    static func isPlaintextSQLite(_ header: [UInt8]?) -> Bool { header == plainHeader }

    static var lastErrno: String { String(cString: strerror(errno)) }

    /// `path` made absolute against the working directory now, links
    /// left as they are: what a relative path names before the host
    /// changes directory.
    static func absolute(_ path: String) -> String {
        guard !path.hasPrefix("/"), let cwd = getcwd(nil, 0) else { return path }
        defer { free(cwd) }
        return String(cString: cwd) + "/" + path
    }

    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let d = String(path[..<slash])
        return d.isEmpty ? "/" : d
    }

    /// Removes a file, treating "already gone" as success.
    static func unlinkIfPresent(_ path: String) throws {
        if unlink(path) != 0 && errno != ENOENT {
            throw TureenError(.io, "cannot remove '\(path)': \(lastErrno)")
        }
    }

    static func fsync(path: String, directory: Bool = false) {
        let fd = Glibc.open(path, (directory ? O_DIRECTORY : 0) | O_RDONLY | O_CLOEXEC)
        if fd >= 0 { _ = Glibc.fsync(fd); close(fd) }
    }
}
