import TureenCore

/// Reads a stored blob by ranges, one chunk in memory at a time.
///
/// Every page of the store is authenticated by SQLCipher as it is read, so
/// a damaged page fails the read. On top of that the reader checks what the
/// pages cannot vouch for: every chunk is there with the length it must
/// have, and the bytes hash to the blob's digest. The hash is taken as the
/// chunks are first read in order, and checked before any byte of the last
/// chunk is handed out, so a read from start to end (get, export, upload)
/// never delivers a blob whose digest is wrong: the last read fails with
/// TUREEN_E_CORRUPT instead.
public final class BlobReader: @unchecked Sendable {
    // Unchecked: the chunk and hashing state are touched only under `lock`.
    public let ref: BlobRef
    public let store: Store
    private let blob: Int64
    private let lock = Lock()
    private var chunk: [UInt8] = []
    private var chunkIndex = -1
    private let hasher: SHA256
    /// Chunks hashed so far, in order from the first.
    private var hashed = 0
    private var verified = false

    init(store: Store, ref: BlobRef, blob: Int64) throws {
        hasher = try SHA256()
        self.store = store
        self.ref = ref
        self.blob = blob
    }

    public var length: Int64 { ref.length }
    /// Written without `length + chunkSize - 1`: a length read from a
    /// damaged store may be anything, and must not overflow.
    var chunkCount: Int {
        let size = Int64(BlobTables.chunkSize)
        return Int(ref.length / size + (ref.length % size == 0 ? 0 : 1))
    }

    /// Copies up to `into.count` bytes from `offset`; 0 at the end.
    public func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard offset >= 0 else { throw TureenError.invalid("a read offset must not be negative (got \(offset))") }
        return try lock.withLock {
            var done = 0
            var at = offset
            while done < buffer.count && at < ref.length {
                let index = Int(at / Int64(BlobTables.chunkSize))
                try load(index)
                let within = Int(at - Int64(index) * Int64(BlobTables.chunkSize))
                let n = min(chunk.count - within, buffer.count - done)
                chunk.withUnsafeBytes { src in
                    UnsafeMutableRawBufferPointer(rebasing: buffer[done..<(done + n)])
                        .copyMemory(from: UnsafeRawBufferPointer(rebasing: src[within..<(within + n)]))
                }
                done += n
                at += Int64(n)
            }
            if ref.length == 0 { try verifyEmpty() }
            return done
        }
    }

    /// Writes the whole blob to `path`, verified (see BlobFile.write).
    /// Each chunk is hashed on another thread while the next is read and
    /// this one written: the file is renamed into place only after the
    /// digest matched, so nothing is handed out unverified.
    public func export(to path: String) throws {
        let size = BlobTables.chunkSize
        let buffers = [UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 16),
                       UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 16)]
        defer { buffers.forEach { $0.deallocate() } }
        try lock.withLock {
            try BlobFile.write(path) { out in
                let digest = try HashingThread.run { hashing in
                    for i in 0..<chunkCount {
                        // Chunk i - 2 had this buffer: it must be hashed.
                        hashing.waitHashed(i - 1)
                        let buffer = buffers[i % 2]
                        let n = try readChunk(i, into: buffer)
                        let piece = UnsafeRawBufferPointer(rebasing: buffer[0..<n])
                        hashing.submit(piece)
                        try out(piece)
                    }
                }
                try check(digest)
            }
        }
    }

    /// Reads the whole blob in order, handing each verified piece to `body`.
    public func stream(_ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        try lock.withLock {
            if ref.length == 0 { try verifyEmpty() }
            for i in 0..<chunkCount {
                try load(i)
                try chunk.withUnsafeBytes { try body($0) }
            }
        }
    }

    private func verifyEmpty() throws {
        guard !verified else { return }
        try check(SHA256.digest([]))
    }

    /// Makes chunk `index` the current one: read, its length checked, and
    /// hashed when it is the next in order.
    private func load(_ index: Int) throws {
        guard index != chunkIndex else { return }
        // The chunk's buffer is reused: one allocation per reader, not per chunk.
        chunkIndex = -1
        let expected = expectedLength(index)
        if chunk.count != expected { chunk = [UInt8](repeating: 0, count: expected) }
        _ = try chunk.withUnsafeMutableBytes { try readChunk(index, into: $0) }
        chunkIndex = index
        if index == hashed {
            hasher.update(chunk)
            hashed += 1
            if hashed == chunkCount { try check(hasher.finish()) }
        }
    }

    private func expectedLength(_ index: Int) -> Int {
        index == chunkCount - 1 ? Int(ref.length - Int64(index) * Int64(BlobTables.chunkSize)) : BlobTables.chunkSize
    }

    /// Reads chunk `index` into `buffer` (room for a whole chunk); fails
    /// unless it is there with the length it must have. Returns that length.
    private func readChunk(_ index: Int, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let expected = expectedLength(index)
        let read = try store.withBlobReader { c in try BlobTables.readChunk(c, blob: blob, seq: index, into: buffer) }
        guard let length = read else {
            if try store.blob(ref.digest) != nil {
                throw corrupt("its chunk \(index) of \(chunkCount) is missing")
            }
            throw TureenError(.notFound, "blob \(ref.digest) was removed while it was read")
        }
        guard length == expected else { throw corrupt("its chunk \(index) holds \(length) bytes instead of \(expected)") }
        return length
    }

    private func check(_ hash: [UInt8]) throws {
        guard BlobRef.digest(of: hash) == ref.digest else {
            chunkIndex = -1
            chunk = []
            throw corrupt("its bytes do not hash to its digest")
        }
        verified = true
    }

    private func corrupt(_ why: String) -> TureenError {
        TureenError(.corrupt, "blob \(ref.digest) in '\(store.path)' is damaged: \(why)")
    }
}
