import Glibc
import TureenCore

/// The directory beside a store that holds its blobs' files,
/// `<store path>.blobs/`, as Couchbase Lite keeps attachments beside its
/// database: a blob's bytes are written once, at the disk's speed, instead
/// of into the write-ahead log and again at the checkpoint.
///
/// A blob's file is named by its row in tureen_blobs: `<id>` once it is
/// complete, `<id>.part` while it is written, `<id>.take` while a download
/// that took it over copies what it may keep. Names by row, not by digest:
/// the id of a row that committed is never given again (BlobTables), so
/// removing a file once its row's deletion committed can never hit a file
/// written since, and the names say nothing of the contents of an
/// encrypted store. The id of a row rolled back is given again (its
/// sqlite_sequence rolls back with it): such a row's files are removed
/// only under the write lock, before it is released or by collection.
///
/// The store keeps one, made at open from its canonical path: a host that
/// changes its working directory, or opens the store through a symbolic
/// link, still finds the same files, and collection never sweeps another
/// directory.
final class BlobDirectory: @unchecked Sendable {
    // Unchecked: `durable` is touched only under `lock`.
    let path: String
    private let lock = Lock()
    /// Whether the directory's entry in its parent is known durable.
    private var durable = false

    init(store: String) {
        path = store + ".blobs"
    }

    enum Kind: String, CaseIterable {
        case complete = ""
        case part = ".part"
        case take = ".take"
    }

    func file(_ id: Int64, _ kind: Kind = .complete) -> String { "\(path)/\(id)\(kind.rawValue)" }

    /// Makes the directory when it is missing (readable by the owner alone,
    /// as the store's own files) and makes its entry in the parent durable,
    /// once per store: a directory found made may be one a process made and
    /// crashed before its parent was flushed.
    func ensure() throws {
        try lock.withLock {
            if durable { return }
            if mkdir(path, 0o700) != 0 && errno != EEXIST {
                throw TureenError(.io, "cannot create the blob directory '\(path)': \(StoreFile.lastErrno)")
            }
            try BlobDirectory.sync(StoreFile.directory(of: path))
            durable = true
        }
    }

    /// Makes renames and removals in the directory durable.
    func sync() throws { try BlobDirectory.sync(path) }

    private static func sync(_ dir: String) throws {
        let fd = open(dir, O_DIRECTORY | O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw TureenError(.io, "cannot open the directory '\(dir)': \(StoreFile.lastErrno)") }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw TureenError(.io, "cannot flush the directory '\(dir)': \(StoreFile.lastErrno)") }
    }

    /// Removes every file of blob `id`, those already gone ignored.
    func remove(_ id: Int64) {
        for k in Kind.allCases { unlink(file(id, k)) }
    }

    /// The ids that files in the directory are named for; other names are
    /// not the store's and are left alone.
    func ids() -> Set<Int64> {
        guard let dir = opendir(path) else { return [] }
        defer { closedir(dir) }
        var found = Set<Int64>()
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw -> String in
                guard let base = raw.baseAddress else { return "" }
                return String(cString: base.assumingMemoryBound(to: CChar.self))
            }
            if let id = BlobDirectory.id(named: name) { found.insert(id) }
        }
        return found
    }

    /// The bytes the blob files take.
    func bytes() -> Int64 {
        ids().reduce(0) { sum, id in Kind.allCases.reduce(sum) { $0 + (StoreFile.size(file(id, $1)) ?? 0) } }
    }

    static func id(named name: String) -> Int64? {
        let digits = name.prefix { $0.isASCII && $0.isNumber }
        guard !digits.isEmpty, digits.first != "0", let id = Int64(digits),
              Kind(rawValue: String(name.dropFirst(digits.count))) != nil else { return nil }
        return id
    }

    /// Removes the directory of a store being removed, and the blob files
    /// in it; files of others' naming are left, and the directory with them.
    static func removeAll(store: String) throws {
        let d = BlobDirectory(store: store)
        guard StoreFile.isDirectory(d.path) else { return }
        for id in d.ids() { d.remove(id) }
        if rmdir(d.path) != 0 && errno != ENOENT && errno != ENOTEMPTY {
            throw TureenError(.io, "cannot remove the blob directory '\(d.path)': \(StoreFile.lastErrno)")
        }
    }
}
