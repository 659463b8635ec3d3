import XCTest
import Glibc
@testable import TureenStore
@testable import TureenCore

/// A download goes on from what an earlier download of the same blob
/// staged, only once that download's writer is gone.
final class BlobStagingTests: XCTestCase {
    var dir = ""
    var store: Store!
    /// The reference to `bytes`.
    private var ref = BlobRef(digest: "", length: 0, contentType: nil)

    override func setUpWithError() throws {
        dir = makeTestDirectory()
        ref = BlobRef(digest: BlobRef.digest(of: try SHA256.digest(bytes)), length: Int64(bytes.count), contentType: nil)
        store = try Store.open(path: dir + "/s.db", options: try StoreOptions.parseOpen(#"{"unencrypted":true}"#))
    }

    override func tearDown() {
        try? store.close()
        removeTestDirectory(dir)
    }

    /// 20 MiB that differ from chunk to chunk.
    private let bytes: [UInt8] = (0..<(20 << 20)).map { UInt8(truncatingIfNeeded: $0 ^ ($0 >> 18) &* 31) }

    private func write(_ w: BlobWriter, _ range: Range<Int>) throws {
        try bytes.withUnsafeBytes { try w.write(UnsafeRawBufferPointer(rebasing: $0[range])) }
    }

    func testADownloadTakesOverOnlyWhatAWriterThatIsGoneStaged() throws {
        let first = try store.downloadWriter(for: ref)
        try write(first, 0..<(9 << 20) + 100)  // writes 9 MiB in whole chunks, holds 100 bytes

        // Its writer is alive: another download starts afresh beside it.
        let beside = try store.downloadWriter(for: ref)
        XCTAssertEqual(beside.written, 0)
        try beside.cancel()

        // Gone (its run failed): the next goes on from the 9 MiB written.
        try first.suspend()
        let next = try store.downloadWriter(for: ref)
        XCTAssertEqual(next.written, 9 << 20)
        XCTAssertThrowsError(try write(first, 0..<1)) { XCTAssertEqual(($0 as? TureenError)?.code, .misuse) }
        try write(next, (9 << 20)..<bytes.count)
        XCTAssertEqual(try next.finish(expecting: ref.digest).digest, ref.digest)

        var read: [UInt8] = []
        try store.blobReader(ref.digest).stream { read.append(contentsOf: $0) }
        XCTAssertTrue(read == bytes)
        // Only the finished blob is left (unreferenced, so collected).
        XCTAssertEqual(try store.collectBlobs(minAgeMs: 0), 1)
    }

    func testStagedBytesThatDoNotHashToTheDigestAreDroppedAtTheEnd() throws {
        let ref = BlobRef(digest: BlobRef.digest(of: [UInt8](repeating: 7, count: 32)), length: Int64(bytes.count),
                          contentType: nil)
        let first = try store.downloadWriter(for: ref)
        try write(first, 0..<(9 << 20))
        try first.suspend()
        let next = try store.downloadWriter(for: ref)
        XCTAssertEqual(next.written, 9 << 20)
        try write(next, (9 << 20)..<bytes.count)
        XCTAssertThrowsError(try next.finish(expecting: ref.digest)) { XCTAssertEqual(($0 as? TureenError)?.code, .http) }
        XCTAssertEqual(try store.collectBlobs(minAgeMs: 0), 0)
        XCTAssertEqual(try store.downloadWriter(for: ref).written, 0)
    }

    func testALiveDownloadWhoseBlobWasCollectedFailsAndLeavesNothing() throws {
        let w = try store.downloadWriter(for: ref)
        try write(w, 0..<(9 << 20))
        XCTAssertEqual(try store.collectBlobs(minAgeMs: 0), 1)
        XCTAssertThrowsError(try write(w, (9 << 20)..<bytes.count)) { XCTAssertEqual(($0 as? TureenError)?.code, .busy) }
        XCTAssertEqual(BlobDirectory(store: store.path).ids(), [])
    }

    func testAWriterThatLostItsBlobCannotDropIt() throws {
        let old = try store.downloadWriter(for: ref)
        try write(old, 0..<(9 << 20))
        // Judged gone (as from another pid namespace): a process that ended.
        try store.withConnection { c in try c.execute("UPDATE tureen_blob_staging SET owner = '2147483646:1:1'") }
        let next = try store.downloadWriter(for: ref)
        XCTAssertEqual(next.written, 9 << 20)
        // Its next touch would find the blob now `next`'s: refused.
        XCTAssertThrowsError(try write(old, (9 << 20)..<(17 << 20))) { XCTAssertEqual(($0 as? TureenError)?.code, .busy) }
        try old.cancel()
        XCTAssertThrowsError(try write(old, 0..<1))
        try write(next, (9 << 20)..<bytes.count)
        XCTAssertEqual(try next.finish(expecting: ref.digest).digest, ref.digest)
        // What `old` wrote meanwhile went to a file nothing reads.
        var read: [UInt8] = []
        try store.blobReader(ref.digest).stream { read.append(contentsOf: $0) }
        XCTAssertTrue(read == bytes)
    }

    func testATakeoverKeepsTheChunksBeforeOneThatDoesNotOpen() throws {
        let first = try store.downloadWriter(for: ref)
        try write(first, 0..<(3 << 20))
        try first.suspend()
        // A byte of the third chunk changed (a torn write, a bad sector).
        let part = BlobDirectory(store: store.path).file(1, .part)
        let fd = open(part, O_RDWR)
        var byte: UInt8 = 0
        XCTAssertEqual(pread(fd, &byte, 1, off_t(SealedBlob.offset(1, chunk: 2) + 7)), 1)
        byte ^= 1
        XCTAssertEqual(pwrite(fd, &byte, 1, off_t(SealedBlob.offset(1, chunk: 2) + 7)), 1)
        close(fd)
        let next = try store.downloadWriter(for: ref)
        XCTAssertEqual(next.written, 2 * Int64(SealedBlob.chunkSize))
        try write(next, (2 * SealedBlob.chunkSize)..<bytes.count)
        XCTAssertEqual(try next.finish(expecting: ref.digest).digest, ref.digest)
    }

    func testAFreshDownloadAfterAFailedTakeoverKeepsItsBlob() throws {
        // Staged bytes beyond the reference's length cannot be taken over.
        let ref = BlobRef(digest: BlobRef.digest(of: [UInt8](repeating: 1, count: 32)), length: 4 << 20, contentType: nil)
        let first = try store.downloadWriter(for: ref)
        try write(first, 0..<(9 << 20))
        try first.suspend()
        let second = try store.downloadWriter(for: ref)
        XCTAssertEqual(second.written, 0)
        try write(second, 0..<(9 << 20))
        // The second writer lives: its blob is not taken over.
        XCTAssertEqual(try store.downloadWriter(for: ref).written, 0)
        try write(second, (9 << 20)..<(17 << 20))
        XCTAssertEqual(second.written, 17 << 20)
    }

    func testAnOwnerIsAliveWhileItsProcessAndWorkerAre() throws {
        let mine = LiveOwner.make()
        XCTAssertTrue(mine.isAlive)
        XCTAssertEqual(LiveOwner(text: mine.text), mine)
        mine.release()
        XCTAssertFalse(mine.isAlive)

        // This pid with another start time: a process that used it before.
        let earlier = LiveOwner(pid: mine.pid, started: (mine.started ?? 0) - 1, worker: 1)
        XCTAssertFalse(earlier.isAlive)

        // A process that has ended.
        var pid: pid_t = 0
        var argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/true"), nil]
        defer { argv.forEach { free($0) } }
        XCTAssertEqual(posix_spawn(&pid, "/bin/true", nil, nil, &argv, environ), 0)
        let started = LiveOwner.startTime(of: pid)
        var status: Int32 = 0
        XCTAssertEqual(waitpid(pid, &status, 0), pid)
        XCTAssertFalse(LiveOwner(pid: pid, started: started, worker: 1).isAlive)

        // The parent of this process lives.
        XCTAssertTrue(LiveOwner(pid: getppid(), started: LiveOwner.startTime(of: getppid()), worker: 1).isAlive)
        for bad in ["", "1:2", "x:1:2", "0:1:2", "12:abc:3"] { XCTAssertNil(LiveOwner(text: bad), bad) }
    }
}
