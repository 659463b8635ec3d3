import Glibc
import TureenCore

/// Writes one blob as its bytes arrive into its file beside the store
/// (BlobDirectory, SealedBlob), holding two pieces of 1 MiB and a batch of
/// sealed chunks in memory however large the blob.
///
/// The bytes are gathered into pieces: a full piece is hashed on a thread
/// of the writer's own (HashingThread) while the caller's seals and writes
/// it, and the next piece fills the other buffer, so that SHA-256, the
/// slowest step beside the disk, runs beside the rest (a download hashes
/// while curl receives). A blob of less than a piece is held, hashed
/// inline, then written, flushed and named in one transaction. A larger one becomes a staging blob: a row
/// with no digest, committed before its file `<id>.part` is made, touched
/// every `touchBytes` so that collection knows its writer is alive (and
/// the writer learns when collection, or another download, took it). Its
/// file is flushed before the transaction that names the blob renames it
/// to `<id>`, so a row never names bytes that are not on disk. A writer
/// abandoned by a crash leaves a staging blob behind, which blob
/// collection removes once its grace period has passed, unless a download
/// of the same blob takes it over first (a download's writer knows the
/// digest it expects, and registers its staging blob in BlobStaging).
public final class BlobWriter: @unchecked Sendable {
    // Unchecked: the staging and hashing state are touched only under `lock`.
    static let touchBytes: Int64 = 8 << 20
    /// A piece: also what is held before a file is made, so that small
    /// blobs take one transaction.
    static let pieceBytes = SealedBlobOutput.batchChunks * SealedBlob.chunkSize
    public let store: Store
    private let contentType: String
    /// Serialises calls: the C API lets any thread use a writer.
    private let lock = Lock()
    private let key: SecretKey
    private let directory: BlobDirectory
    private var staging: Int64?
    private var output: SealedBlobOutput?
    /// The two pieces' buffers (made on first use), the one being filled
    /// and how full it is.
    private var buffers: [UnsafeMutableRawBufferPointer?] = [nil, nil]
    private var current = 0
    private var fill = 0
    /// Made with the first full piece; it then owns `hasher`.
    private var hashing: HashingThread?
    private var submitted = 0
    private let hasher: SHA256
    private var length: Int64 = 0
    private var touchedAt: Int64 = 0
    private var done = false
    /// A download's: the digest it must hash to and who writes it.
    private let download: (digest: String, owner: LiveOwner)?

    init(store: Store, contentType: String?, download: (digest: String, owner: LiveOwner)? = nil) throws {
        hasher = try SHA256()
        key = try store.withBlobReader { c in try BlobKey.load(c) }
        directory = store.blobDirectory
        self.store = store
        self.contentType = contentType ?? BlobRef.defaultContentType
        self.download = download
    }

    /// Goes on with a download's staging blob `blob`, already claimed for
    /// `download.owner`. Its whole chunks are opened and hashed again in
    /// order, so the digest checked at the end covers the bytes kept, not a
    /// state remembered from another process, and sealed again into a new
    /// file under a new salt that replaces the old one: a writer wrongly
    /// judged gone writes on into the old file, which nothing reads, and
    /// never reuses a nonce. The new file, `<id>.take`, is made afresh (one
    /// a resumer judged gone left is unlinked first), renamed over the old
    /// and, on failure, removed, each only in a transaction that finds the
    /// blob still this download's: two resumers never write one file, and
    /// one that lost the blob leaves the other's `.take` alone. Chunks from
    /// the first that does not open are
    /// dropped. Nil (and the blob dropped) when it holds more than `limit`
    /// bytes: a download that failed on them every run would keep them
    /// alive (each takeover touches them) and never complete.
    static func resuming(_ blob: Int64, store: Store, contentType: String, limit: Int64,
                         download: (digest: String, owner: LiveOwner)) throws -> BlobWriter? {
        let w = try BlobWriter(store: store, contentType: contentType, download: download)
        let dir = w.directory
        let old = try? SealedBlobInput(path: dir.file(blob, .part), id: blob, key: w.key, length: nil)
        let whole = old?.wholeChunks ?? 0
        guard whole * Int64(SealedBlob.chunkSize) <= limit else {
            try store.withBlobConnection { c in try c.transaction { try BlobTables.delete(c, blob: blob) } }
            dir.remove(blob)
            return nil  // `w` goes, and its deinit releases the owner
        }
        let take = dir.file(blob, .take)
        let out = try w.whileHeld(blob) { _ throws -> SealedBlobOutput in
            try StoreFile.unlinkIfPresent(take)
            return try SealedBlobOutput(path: take, id: blob, key: w.key, fresh: true)
        }
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: SealedBlob.chunkSize, alignment: 16)
        defer { chunk.deallocate() }
        var kept: Int64 = 0
        do {
            if let old, let base = chunk.baseAddress {
                while kept < whole, try old.read(kept, count: SealedBlob.chunkSize, last: false, into: base) {
                    w.hasher.update(UnsafeRawBufferPointer(chunk))
                    try out.append(UnsafeRawBufferPointer(chunk))
                    kept += 1
                }
            }
            try out.flush()
            try w.whileHeld(blob) { _ in
                guard rename(take, dir.file(blob, .part)) == 0 else {
                    throw TureenError(.busy, "the staged download of \(download.digest) was removed while it was taken over: \(StoreFile.lastErrno)")
                }
            }
        } catch {
            _ = try? w.whileHeld(blob) { _ in unlink(take) }
            throw error
        }
        w.staging = blob
        w.output = out
        w.length = kept * Int64(SealedBlob.chunkSize)
        w.touchedAt = w.length
        return w
    }

    deinit {
        // The thread may still read a piece: it ends before they go.
        hashing?.stop()
        buffers.forEach { $0?.deallocate() }
        download?.owner.release()
    }

    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        try lock.withLock {
            guard !done else { throw TureenError.misuse("this blob writer is finished or cancelled") }
            length += Int64(bytes.count)
            var rest = bytes
            while rest.count > 0 {
                let buffer = self.buffer(current)
                let take = min(BlobWriter.pieceBytes - fill, rest.count)
                UnsafeMutableRawBufferPointer(rebasing: buffer[fill..<(fill + take)])
                    .copyMemory(from: UnsafeRawBufferPointer(rebasing: rest[0..<take]))
                fill += take
                rest = UnsafeRawBufferPointer(rebasing: rest[take...])
                if fill == BlobWriter.pieceBytes { try orAbandon { try writePiece() } }
            }
        }
    }

    /// Writes the rest of the file open as `fd` (the file at `path`), read
    /// straight into the pieces: an import copies its bytes no more than
    /// the floor does.
    func write(readingFrom fd: Int32, path: String) throws {
        try lock.withLock {
            guard !done else { throw TureenError.misuse("this blob writer is finished or cancelled") }
            while true {
                let room = UnsafeMutableRawBufferPointer(rebasing: buffer(current)[fill...])
                let n = try orAbandon { try BlobFile.read(fd, into: room, path: path) }
                if n == 0 { return }
                length += Int64(n)
                fill += n
                if fill == BlobWriter.pieceBytes { try orAbandon { try writePiece() } }
            }
        }
    }

    private func buffer(_ i: Int) -> UnsafeMutableRawBufferPointer {
        if let b = buffers[i] { return b }
        let b = UnsafeMutableRawBufferPointer.allocate(byteCount: BlobWriter.pieceBytes, alignment: 16)
        buffers[i] = b
        return b
    }

    /// The bytes of the piece being filled.
    private var tail: UnsafeRawBufferPointer {
        guard let b = buffers[current] else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        return UnsafeRawBufferPointer(rebasing: b[0..<fill])
    }

    /// Hands the full piece to the hashing thread, seals and writes it
    /// meanwhile, and goes on in the other buffer once its piece, the one
    /// before, is hashed.
    private func writePiece() throws {
        let piece = tail
        let h = try hashing ?? HashingThread.start(hasher)
        hashing = h
        h.submit(piece)
        submitted += 1
        let out = try output ?? startFile()
        try out.append(piece)
        if length - touchedAt >= BlobWriter.touchBytes {
            try out.flush()
            try touch()
        }
        current ^= 1
        fill = 0
        h.waitHashed(submitted - 1)
    }

    /// Ends the hashing thread, if any (the pieces it reads may go then).
    private func stopHashing() {
        hashing?.stop()
        hashing = nil
    }

    /// The bytes written so far.
    public var written: Int64 { lock.withLock { length } }

    /// Names the blob and returns how to refer to it. When these bytes are
    /// stored already, nothing more is kept: the blob is shared.
    public func finish(expecting expected: String? = nil) throws -> BlobRef {
        try lock.withLock {
            guard !done else { throw TureenError.misuse("this blob writer is finished or cancelled") }
            done = true
            // The last piece is sealed while it is hashed.
            let last = tail
            if let h = hashing { h.submit(last) } else { hasher.update(last) }
            if let out = output { try orAbandon { try out.append(last) } }
            let digest = try orAbandon { try BlobRef.digest(of: hashing?.finish() ?? hasher.finish()) }
            hashing = nil
            // Bytes that are not the blob asked for are not kept at all.
            if let e = expected, e != digest {
                try? dropStaging()
                throw TureenError(.http, "the bytes received for blob \(e) hash to \(digest); they were not kept")
            }
            let row = try orAbandon { try output == nil ? finishHeld(digest) : finishStaged(digest) }
            staging = nil
            download?.owner.release()
            return BlobRef(digest: digest, length: row.length, contentType: contentType)
        }
    }

    /// A blob held whole in memory: written, flushed and named in one
    /// transaction (which no collection can come between).
    private func finishHeld(_ digest: String) throws -> BlobTables.Row {
        try store.withBlobConnection { c in
            var made: Int64?
            do {
                return try c.transaction {
                    let now = Clock.nowMs()
                    if let old = try BlobTables.find(c, digest: digest) {
                        try BlobTables.touch(c, blob: old.id, now: now)
                        return old
                    }
                    try BlobKey.require(key, c)
                    let id = try BlobTables.beginStaging(c, contentType: contentType, now: now)
                    made = id
                    try directory.ensure()
                    let out = try SealedBlobOutput(path: directory.file(id, .part), id: id, key: key)
                    try out.append(tail)
                    try out.finish()
                    try place(id)
                    return try BlobTables.name(c, blob: id, digest: digest, length: length, now: now)
                }
            } catch {
                // Rolled back: no row has this id, so its files are nobody's,
                // but the id is given again to the next row made: they go
                // now, while the write lock keeps that row from being made.
                if let id = made { directory.remove(id) }
                throw error
            }
        }
    }

    /// A staging blob: its file flushed first, outside any transaction,
    /// then named (or dropped, when the same bytes are stored already).
    private func finishStaged(_ digest: String) throws -> BlobTables.Row {
        guard let out = output, let id = staging else { throw TureenError(.internal, "a blob writer lost its file") }
        try out.finish()
        output = nil
        var shared = false
        let row: BlobTables.Row = try store.withBlobConnection { c in
            try c.transaction {
                let now = Clock.nowMs()
                try requireHeld(c, id)
                try BlobKey.require(key, c)
                if let old = try BlobTables.find(c, digest: digest) {
                    try BlobTables.delete(c, blob: id)
                    try BlobTables.touch(c, blob: old.id, now: now)
                    shared = true
                    return old
                }
                try place(id)
                return try BlobTables.name(c, blob: id, digest: digest, length: length, now: now)
            }
        }
        if shared { directory.remove(id) }
        return row
    }

    /// Renames blob `id`'s flushed file to its final name, durably.
    private func place(_ id: Int64) throws {
        guard rename(directory.file(id, .part), directory.file(id)) == 0 else {
            throw TureenError(.io, "cannot name the blob file '\(directory.file(id))': \(StoreFile.lastErrno)")
        }
        try directory.sync()
    }

    /// Drops what was written; the writer cannot be used afterwards.
    public func cancel() throws {
        try lock.withLock {
            guard !done else { return }
            try dropStaging()
        }
    }

    /// Stops a download that could not complete, keeping the whole chunks
    /// it wrote for the next download of the same blob to go on from (the
    /// bytes held in memory are dropped); any other writer is cancelled.
    /// The writer cannot be used afterwards.
    public func suspend() throws {
        guard let d = download else { return try cancel() }
        let kept: Int64? = lock.withLock {
            defer { staging = nil }
            done = true
            try? output?.flush()
            output = nil
            stopHashing()
            fill = 0
            return staging
        }
        d.owner.release()
        // Said in the store too: another process cannot see this one's
        // writers, and this process may live on for long.
        if let id = kept {
            try store.withBlobConnection { c in try c.transaction { try BlobStaging.disown(c, blob: id, owner: d.owner) } }
        }
    }

    private func dropStaging() throws {
        done = true
        output = nil
        stopHashing()
        fill = 0
        defer { download?.owner.release() }
        guard let id = staging else { return }
        staging = nil
        let dropped = try store.withBlobConnection { c in
            try c.transaction { () -> Bool in
                guard try holds(c, id) else { return false }
                try BlobTables.delete(c, blob: id)
                return true
            }
        }
        // A blob another download took over keeps its files.
        if dropped { directory.remove(id) }
    }

    /// Whether staging blob `id` is still this writer's: collection may
    /// have removed it, or, for a download, another download taken it over.
    private func holds(_ c: Connection, _ id: Int64) throws -> Bool {
        guard let d = download else { return try BlobTables.isStaging(c, blob: id) }
        return try BlobStaging.owns(c, blob: id, owner: d.owner)
    }

    /// Fails unless staging blob `id` is still this writer's: bytes written
    /// after collection removed it, or after another download took it
    /// over, would be kept by nothing or mixed into another's.
    private func requireHeld(_ c: Connection, _ id: Int64) throws {
        guard try holds(c, id) else {
            // Not this writer's to drop any more.
            staging = nil
            output = nil
            throw TureenError(.busy, "the blob being written was removed by blob collection (or, for a download, taken over by another download of it) before it was complete; write it again")
        }
    }

    /// Runs `body` in a write transaction that finds staging blob `id`
    /// still this writer's (else fails as requireHeld does).
    private func whileHeld<T>(_ id: Int64, _ body: (Connection) throws -> T) throws -> T {
        try store.withBlobConnection { c in
            try c.transaction {
                try requireHeld(c, id)
                return try body(c)
            }
        }
    }

    /// Makes the staging blob (registered, for a download) and its file.
    private func startFile() throws -> SealedBlobOutput {
        let id: Int64 = try store.withBlobConnection { c in
            try c.transaction {
                let id = try BlobTables.beginStaging(c, contentType: contentType, now: Clock.nowMs())
                if let d = download { try BlobStaging.register(c, blob: id, digest: d.digest, owner: d.owner) }
                return id
            }
        }
        staging = id
        try directory.ensure()
        let out = try SealedBlobOutput(path: directory.file(id, .part), id: id, key: key)
        output = out
        return out
    }

    /// Touches the staging blob, once it is still this writer's.
    private func touch() throws {
        guard let id = staging else { return }
        try whileHeld(id) { c in try BlobTables.touch(c, blob: id, now: Clock.nowMs()) }
        touchedAt = length
    }

    /// Runs `body`; when it fails the writer is spent, and what it had
    /// written is dropped now if it can be (else collection removes it).
    private func orAbandon<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch {
            try? dropStaging()
            throw error
        }
    }
}
