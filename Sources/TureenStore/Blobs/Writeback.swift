import Glibc

/// Asks the kernel to start writing a file's pages back every
/// `everyBytes` written, without waiting: the disk then works beside the
/// hashing and sealing of what follows instead of all of it waiting for
/// the fdatasync at the end. A hint only: durability still comes from that
/// fdatasync.
struct Writeback {
    static let everyBytes: Int64 = 8 << 20
    /// Linux's sync_file_range(2), which Swift's Glibc module does not
    /// declare; resolved from libc once (nil elsewhere: no early writeback).
    private static let syncFileRange: (@convention(c) (Int32, Int64, Int64, UInt32) -> Int32)? =
        dlsym(nil, "sync_file_range").map { unsafeBitCast($0, to: (@convention(c) (Int32, Int64, Int64, UInt32) -> Int32).self) }
    /// SYNC_FILE_RANGE_WRITE in linux/fs.h: start writing, do not wait.
    private static let write: UInt32 = 2
    /// Bytes written from `start`, and how many of them the disk was asked
    /// to start writing back.
    private var written: Int64
    private var started: Int64

    /// For a file whose bytes from offset `start` are written in order.
    init(from start: Int64 = 0) {
        written = start
        started = start
    }

    /// Counts `n` more bytes written to `fd`.
    mutating func wrote(_ n: Int, to fd: Int32) {
        written += Int64(n)
        guard written - started >= Writeback.everyBytes else { return }
        _ = Writeback.syncFileRange?(fd, started, written - started, Writeback.write)
        started = written
    }
}
