import Glibc
import TureenCore

/// Files a blob comes from or goes to, moved a piece at a time so that
/// their size never shows in memory.
enum BlobFile {
    static let pieceSize = 1 << 20

    /// Opens the regular file at `path` to read it (see `read`).
    static func openToRead(_ path: String) throws -> Int32 {
        guard !path.isEmpty else { throw TureenError.invalid("the file path is empty") }
        // O_NONBLOCK: opening a FIFO with no writer would wait for one, for
        // ever. Only a regular file is read: a FIFO, a device or /dev/zero
        // could hold the call for ever too.
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw TureenError(errno == ENOENT ? .notFound : .io, "cannot open '\(path)': \(StoreFile.lastErrno)") }
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            let e = TureenError(.io, "cannot read '\(path)': \(StoreFile.lastErrno)")
            close(fd)
            throw e
        }
        guard st.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            throw TureenError(.io, "cannot import '\(path)': it is not a regular file (a directory, FIFO, socket or device)")
        }
        return fd
    }

    /// Reads from `fd`, the file at `path`, into `buffer`: how many bytes,
    /// 0 at its end.
    static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, path: String) throws -> Int {
        while true {
            let n = Glibc.read(fd, buffer.baseAddress, buffer.count)
            if n >= 0 { return n }
            if errno != EINTR { throw TureenError(.io, "cannot read '\(path)': \(StoreFile.lastErrno)") }
        }
    }

    /// Writes all of `bytes` to `fd`, the file at `path`.
    static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws {
        guard let base = bytes.baseAddress else { return }  // nothing to write
        var done = 0
        while done < bytes.count {
            let n = Glibc.write(fd, base + done, bytes.count - done)
            if n < 0 {
                if errno == EINTR { continue }
                throw TureenError(.io, "cannot write '\(path)': \(StoreFile.lastErrno)")
            }
            done += n
        }
    }

    /// Writes the file through `body`, which is given a sink for pieces.
    /// The bytes go to a temporary file beside it that is renamed over
    /// `path` only once all of them are written and flushed, so a failure
    /// or a crash never leaves a partial file under the name asked for.
    static func write(_ path: String, _ body: ((UnsafeRawBufferPointer) throws -> Void) throws -> Void) throws {
        guard !path.isEmpty else { throw TureenError.invalid("the file path is empty") }
        // Short and in the same directory (rename stays within one file
        // system): a name made from `path`'s own could pass NAME_MAX.
        let slash = path.utf8.lastIndex(of: UInt8(ascii: "/"))
        let dir = slash.map { String(path[...$0]) } ?? ""
        let temp = "\(dir).tureen-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o666)
        guard fd >= 0 else { throw TureenError(.io, "cannot create a file beside '\(path)': \(StoreFile.lastErrno)") }
        var closed = false
        var renamed = false
        defer {
            if !closed { close(fd) }
            if !renamed { unlink(temp) }
        }
        var writeback = Writeback()
        try body { bytes in
            try writeAll(fd, bytes, path: path)
            writeback.wrote(bytes.count, to: fd)
        }
        guard fdatasync(fd) == 0 else { throw TureenError(.io, "cannot flush '\(path)': \(StoreFile.lastErrno)") }
        closed = true
        guard close(fd) == 0 else { throw TureenError(.io, "cannot write '\(path)': \(StoreFile.lastErrno)") }
        guard rename(temp, path) == 0 else { throw TureenError(.io, "cannot write '\(path)': \(StoreFile.lastErrno)") }
        renamed = true
    }
}
