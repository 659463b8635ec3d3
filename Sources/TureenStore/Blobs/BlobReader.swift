import TureenCore

/// Reads a stored blob by ranges, one chunk in memory at a time.
///
/// Every chunk is authenticated as it is read (by AES-GCM in the blob's
/// file; by SQLCipher, page by page, for a blob a store written before kept
/// inside itself), so a damaged chunk fails the read. On top of that the
/// reader checks what chunks cannot vouch for: every one is there with the
/// length it must have, and the bytes hash to the blob's digest. The hash
/// is taken as the chunks are first read in order, and checked before any
/// byte of the last chunk is handed out, so a read from start to end (get,
/// export, upload) never delivers a blob whose digest is wrong: the last
/// read fails with TUREEN_E_CORRUPT instead.
public final class BlobReader: @unchecked Sendable {
    // Unchecked: the chunk and hashing state are touched only under `lock`.
    public let ref: BlobRef
    public let store: Store
    private let chunks: BlobChunks
    private let lock = Lock()
    private var chunk: [UInt8] = []
    private var chunkIndex = -1
    private let hasher: SHA256
    /// Chunks hashed so far, in order from the first.
    private var hashed = 0
    private var verified = false

    init(store: Store, ref: BlobRef, chunks: BlobChunks) throws {
        hasher = try SHA256()
        self.store = store
        self.ref = ref
        self.chunks = chunks
    }

    public var length: Int64 { ref.length }
    var chunkCount: Int { chunks.chunkCount(ref.length) }
    private var chunkSize: Int { chunks.chunkSize }

    /// Copies up to `into.count` bytes from `offset`; 0 at the end.
    public func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard offset >= 0 else { throw TureenError.invalid("a read offset must not be negative (got \(offset))") }
        return try lock.withLock {
            var done = 0
            var at = offset
            while done < buffer.count && at < ref.length {
                let index = Int(at / Int64(chunkSize))
                try load(index)
                let within = Int(at - Int64(index) * Int64(chunkSize))
                let n = min(chunk.count - within, buffer.count - done)
                chunk.withUnsafeBytes { src in
                    UnsafeMutableRawBufferPointer(rebasing: buffer[done..<(done + n)])
                        .copyMemory(from: UnsafeRawBufferPointer(rebasing: src[within..<(within + n)]))
                }
                done += n
                at += Int64(n)
            }
            if at >= ref.length { try verifyAtEnd() }
            return done
        }
    }

    /// Writes the whole blob to `path`, verified (see BlobFile.write).
    /// The chunks go in pieces of about BlobFile.pieceSize, each read with
    /// one call (one pread for a sealed file) and hashed on another thread
    /// while the next is read and this one written: the file is renamed
    /// into place only after the digest matched, so nothing is handed out
    /// unverified.
    public func export(to path: String) throws {
        let per = max(1, BlobFile.pieceSize / chunkSize)
        let size = per * chunkSize
        let buffers = [UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 16),
                       UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 16)]
        defer { buffers.forEach { $0.deallocate() } }
        try lock.withLock {
            try BlobFile.write(path) { out in
                let digest = try pass {
                    try HashingThread.run { hashing in
                        var first = 0
                        var piece = 0
                        while first < chunkCount {
                            // Piece - 2 had this buffer: it must be hashed.
                            hashing.waitHashed(piece - 1)
                            let buffer = buffers[piece % 2]
                            let n = try readChunks(first, min(per, chunkCount - first), into: buffer)
                            let bytes = UnsafeRawBufferPointer(rebasing: buffer[0..<n])
                            hashing.submit(bytes)
                            try out(bytes)
                            first += per
                            piece += 1
                        }
                    }
                }
                try check(digest)
            }
        }
    }

    /// Reads the whole blob in order, handing each verified piece to `body`.
    public func stream(_ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        try lock.withLock {
            try pass {
                for i in 0..<chunkCount {
                    try load(i)
                    try chunk.withUnsafeBytes { try body($0) }
                }
            }
            try verifyAtEnd()
        }
    }

    /// At the end of the blob: an empty blob has not been hashed yet.
    private func verifyAtEnd() throws {
        guard !verified else { return }
        if chunkCount == 0 { return try check(SHA256.digest([])) }
        if hashed == chunkCount - 1 { try load(hashed) }
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
        guard index == hashed else { return }
        hasher.update(chunk)
        hashed += 1
        // A file's last chunk is empty when the length is a whole number
        // of chunks: authenticated now, so the digest is checked before
        // any byte of this chunk, the last that holds some, is handed out.
        if hashed == chunkCount - 1 && expectedLength(hashed) == 0 {
            _ = try chunk.withUnsafeMutableBytes { try readChunk(hashed, into: $0) }
            hashed += 1
        }
        if hashed == chunkCount { try check(hasher.finish()) }
    }

    private func expectedLength(_ index: Int) -> Int {
        index == chunkCount - 1 ? Int(ref.length - Int64(index) * Int64(chunkSize)) : chunkSize
    }

    /// Reads chunk `index` into `buffer` (room for a whole chunk); fails
    /// unless it is there, sound, with the length it must have. Returns
    /// that length.
    private func readChunk(_ index: Int, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        try readChunks(index, 1, into: buffer)
    }

    /// Reads `count` chunks from `first` into `buffer` (room for them all
    /// whole), as readChunk does one; returns how many bytes they hold.
    private func readChunks(_ first: Int, _ count: Int, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let lastIndex = first + count - 1
        let lastCount = expectedLength(lastIndex)
        do {
            try chunks.read(first, chunks: count, lastCount: lastCount, last: lastIndex == chunkCount - 1, into: buffer)
        } catch let run as ChunkRunFault {
            throw try failure(run.fault, index: run.index, expected: expectedLength(run.index))
        }
        return (count - 1) * chunkSize + lastCount
    }

    /// Runs a pass over the chunks.
    private func pass<T>(_ body: () throws -> T) throws -> T {
        do {
            return try chunks.pass(body)
        } catch let fault as ChunkFault {
            throw try failure(fault, index: 0, expected: 0)
        }
    }

    /// What `fault` at chunk `index` means: the blob was collected while
    /// it was read, or it is damaged.
    private func failure(_ fault: ChunkFault, index: Int, expected: Int) throws -> TureenError {
        guard try store.blob(ref.digest) != nil else {
            return TureenError(.notFound, "blob \(ref.digest) was removed while it was read")
        }
        switch fault {
        case .missing: return corrupt("its chunk \(index) of \(chunkCount) is missing")
        case .wrongLength(let n): return corrupt("its chunk \(index) holds \(n) bytes instead of \(expected)")
        case .unauthentic: return corrupt("its chunk \(index) of \(chunkCount) does not authenticate (altered, moved or cut short)")
        case .fileMissing: return corrupt("its file is missing from '\(store.blobDirectory.path)'")
        }
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
