import Glibc
import TureenCore

/// A blob's file: BlobStream's format (TureenCore), sealed under the
/// store's blob key (BlobKey) with a salt of the file's own, in chunks of
/// `chunkSize` authenticated by AES-256-GCM.
///
/// Every chunk but the last is full and the last holds the rest (0 to
/// chunkSize - 1 bytes), so a blob of n bytes has n / chunkSize + 1 chunks
/// and chunk i starts at a computable offset: a read at any offset opens
/// only the chunk it falls in. The header's key id is the blob's row
/// ("b<id>"), which every chunk authenticates: a file moved under another
/// row's name does not open.
enum SealedBlob {
    static let chunkSize = 64 * 1024
    static let sealedChunk = chunkSize + AESGCM.tagSize

    static func keyId(_ id: Int64) -> String { "b\(id)" }

    static func headerSize(_ id: Int64) -> Int { ChunkCipher.headerSize(keyId: keyId(id)) }

    /// The longest blob a file may hold. A store's row may say anything
    /// (an unencrypted store's rows are not authenticated): a longer length
    /// is damage, and up to it no offset in the file overflows an Int64.
    static let maxLength: Int64 = 1 << 62

    /// Written without `length + chunkSize`: a length read from a damaged
    /// store may be anything, and must not overflow.
    static func chunkCount(_ length: Int64) -> Int64 { length / Int64(chunkSize) + 1 }

    static func offset(_ id: Int64, chunk: Int64) -> Int64 { Int64(headerSize(id)) + chunk * Int64(sealedChunk) }

    /// The size of the file of a blob of `length` bytes; nil for a length
    /// no file holds (negative, or past `maxLength`).
    static func fileSize(_ id: Int64, length: Int64) -> Int64? {
        guard (0...maxLength).contains(length) else { return nil }
        return offset(id, chunk: chunkCount(length) - 1) + length % Int64(chunkSize) + Int64(AESGCM.tagSize)
    }
}

/// A blob's file opened to read, one chunk at a time.
final class SealedBlobInput {
    let fd: Int32
    private let id: Int64
    private let cipher: ChunkCipher
    /// Room for the sealed chunks of one read: one chunk's, grown for a
    /// read of several (an export's), so a read of a range costs no more.
    private var sealed: UnsafeMutableRawBufferPointer
    private let path: String

    /// Opens `path`, the file of blob `id`; nil when it does not exist.
    /// `length`, when given, is the plaintext length the file must hold.
    init?(path: String, id: Int64, key: SecretKey, length: Int64?) throws {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            throw TureenError(.io, "cannot open the blob file '\(path)': \(StoreFile.lastErrno)")
        }
        do {
            cipher = try SealedBlobInput.opening(fd, path: path, id: id, key: key, length: length)
        } catch {
            close(fd)
            throw error
        }
        self.fd = fd
        self.id = id
        self.path = path
        sealed = .allocate(byteCount: SealedBlob.sealedChunk, alignment: 16)
    }

    /// The cipher of the file open as `fd`, once its header and size are
    /// those of blob `id`.
    private static func opening(_ fd: Int32, path: String, id: Int64, key: SecretKey, length: Int64?) throws -> ChunkCipher {
        var header = [UInt8](repeating: 0, count: SealedBlob.headerSize(id))
        let got = header.withUnsafeMutableBytes { readFully(fd, $0, at: 0) }
        guard got >= 0 else { throw TureenError(.io, "cannot read the blob file '\(path)': \(StoreFile.lastErrno)") }
        guard got == header.count,
              let cipher = try ChunkCipher(opening: header, under: key, keyId: SealedBlob.keyId(id), chunkSize: SealedBlob.chunkSize)
        else { throw TureenError(.corrupt, "the blob file '\(path)' is damaged: its header is not that of blob \(id)") }
        guard let n = length else { return cipher }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw TureenError(.io, "cannot read the blob file '\(path)': \(StoreFile.lastErrno)") }
        guard let size = SealedBlob.fileSize(id, length: n) else {
            throw TureenError(.corrupt, "blob \(id) is damaged: its length is \(n)")
        }
        guard Int64(st.st_size) == size else {
            throw TureenError(.corrupt, "the blob file '\(path)' is damaged: it holds \(st.st_size) bytes instead of \(size)")
        }
        return cipher
    }

    deinit {
        close(fd)
        sealed.deallocate()
    }

    /// How many whole chunks (not the last) the file holds after its header.
    var wholeChunks: Int64 {
        var st = stat()
        guard fstat(fd, &st) == 0 else { return 0 }
        return max(0, (Int64(st.st_size) - Int64(SealedBlob.headerSize(id))) / Int64(SealedBlob.sealedChunk))
    }

    /// Opens chunk `index`, of `count` plaintext bytes, into `buffer`;
    /// false when it is not there whole or does not authenticate.
    func read(_ index: Int64, count: Int, last: Bool, into buffer: UnsafeMutableRawPointer) throws -> Bool {
        try read(index, chunks: 1, lastCount: count, last: last, into: buffer) == 1
    }

    /// Opens `chunks` chunks from `first` into `buffer`, one after the
    /// other, read with one pread: each whole but the last, which holds
    /// `lastCount` bytes (the blob's last chunk when `last`). Returns how
    /// many opened, from the first: fewer when the next one is not there
    /// whole or does not authenticate.
    func read(_ first: Int64, chunks: Int, lastCount: Int, last: Bool, into buffer: UnsafeMutableRawPointer) throws -> Int {
        guard chunks > 0 else { return 0 }
        let want = (chunks - 1) * SealedBlob.sealedChunk + lastCount + AESGCM.tagSize
        if sealed.count < want {
            sealed.deallocate()
            sealed = .allocate(byteCount: want, alignment: 16)
        }
        let got = SealedBlobInput.readFully(fd, UnsafeMutableRawBufferPointer(rebasing: sealed[0..<want]),
                                            at: SealedBlob.offset(id, chunk: first))
        guard got >= 0 else { throw TureenError(.io, "cannot read the blob file '\(path)': \(StoreFile.lastErrno)") }
        for k in 0..<chunks {
            let isLast = k == chunks - 1
            let at = k * SealedBlob.sealedChunk
            let end = at + (isLast ? lastCount : SealedBlob.chunkSize) + AESGCM.tagSize
            guard end <= got else { return k }
            let ok = try cipher.open(UnsafeRawBufferPointer(rebasing: sealed[at..<end]), index: UInt64(first) + UInt64(k),
                                     last: last && isLast, into: buffer + k * SealedBlob.chunkSize)
            guard ok else { return k }
        }
        return chunks
    }

    /// Reads up to the buffer's size at `offset`; how many bytes, or -1.
    private static func readFully(_ fd: Int32, _ buffer: UnsafeMutableRawBufferPointer, at offset: Int64) -> Int {
        guard let base = buffer.baseAddress else { return 0 }
        var done = 0
        while done < buffer.count {
            let n = pread(fd, base + done, buffer.count - done, off_t(offset) + off_t(done))
            if n < 0 {
                if errno == EINTR { continue }
                return -1
            }
            if n == 0 { break }
            done += n
        }
        return done
    }
}

/// A blob's file being written: plaintext in, sealed chunks out, a batch
/// of them per write(2).
final class SealedBlobOutput {
    /// Sealed chunks gathered before each write(2).
    static let batchChunks = 16
    let path: String
    private let fd: Int32
    private let cipher: ChunkCipher
    private let plain: UnsafeMutableRawBufferPointer
    private var plainCount = 0
    private let out: UnsafeMutableRawBufferPointer
    private var outCount = 0
    /// Chunks sealed so far.
    private(set) var chunks: Int64 = 0
    private var writeback: Writeback
    private var closed = false

    /// Creates (or empties) `path` for blob `id` and writes the header;
    /// `fresh`, fails if `path` exists instead of emptying it.
    init(path: String, id: Int64, key: SecretKey, fresh: Bool = false) throws {
        cipher = try ChunkCipher(sealingUnder: key, keyId: SealedBlob.keyId(id), chunkSize: SealedBlob.chunkSize)
        let fd = open(path, O_WRONLY | O_CREAT | (fresh ? O_EXCL : O_TRUNC) | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw TureenError(.io, "cannot create the blob file '\(path)': \(StoreFile.lastErrno)") }
        self.fd = fd
        self.path = path
        plain = .allocate(byteCount: SealedBlob.chunkSize, alignment: 16)
        out = .allocate(byteCount: SealedBlobOutput.batchChunks * SealedBlob.sealedChunk, alignment: 16)
        writeback = Writeback(from: Int64(cipher.header.count))
        try cipher.header.withUnsafeBytes { try write($0) }
    }

    deinit {
        if !closed { close(fd) }
        plain.deallocate()
        out.deallocate()
    }

    /// Plaintext held until it fills a chunk.
    var held: Int { plainCount }

    /// Appends plaintext; whole chunks are sealed and written in batches.
    func append(_ bytes: UnsafeRawBufferPointer) throws {
        var rest = bytes
        while rest.count > 0 {
            if plainCount == 0 && rest.count >= SealedBlob.chunkSize {
                // A whole chunk straight from the caller's bytes: no copy.
                try seal(UnsafeRawBufferPointer(rebasing: rest[0..<SealedBlob.chunkSize]), last: false)
                rest = UnsafeRawBufferPointer(rebasing: rest[SealedBlob.chunkSize...])
                continue
            }
            let take = min(SealedBlob.chunkSize - plainCount, rest.count)
            UnsafeMutableRawBufferPointer(rebasing: plain[plainCount..<(plainCount + take)])
                .copyMemory(from: UnsafeRawBufferPointer(rebasing: rest[0..<take]))
            plainCount += take
            rest = UnsafeRawBufferPointer(rebasing: rest[take...])
            if plainCount == SealedBlob.chunkSize {
                plainCount = 0
                try seal(UnsafeRawBufferPointer(plain), last: false)
            }
        }
    }

    /// Seals chunk `chunks` (already whole, or the last) into the batch,
    /// written as soon as it is full: what a killed process had received
    /// is then in the file for a download to go on from.
    func seal(_ chunk: UnsafeRawBufferPointer, last: Bool) throws {
        guard let base = out.baseAddress else { return }
        outCount += try cipher.seal(chunk, index: UInt64(chunks), last: last, into: base + outCount)
        chunks += 1
        if outCount + SealedBlob.sealedChunk > out.count { try flush() }
    }

    /// Writes the sealed chunks gathered (not the plaintext held).
    func flush() throws {
        guard outCount > 0 else { return }
        try write(UnsafeRawBufferPointer(rebasing: out[0..<outCount]))
        writeback.wrote(outCount, to: fd)
        outCount = 0
    }

    /// Seals the plaintext held as the last chunk, writes everything and
    /// makes it durable; the file is closed afterwards.
    func finish() throws {
        try seal(UnsafeRawBufferPointer(rebasing: plain[0..<plainCount]), last: true)
        plainCount = 0
        try flush()
        guard fdatasync(fd) == 0 else { throw TureenError(.io, "cannot flush the blob file '\(path)': \(StoreFile.lastErrno)") }
        closed = true
        guard close(fd) == 0 else { throw TureenError(.io, "cannot write the blob file '\(path)': \(StoreFile.lastErrno)") }
    }

    private func write(_ bytes: UnsafeRawBufferPointer) throws {
        try BlobFile.writeAll(fd, bytes, path: path)
    }
}
