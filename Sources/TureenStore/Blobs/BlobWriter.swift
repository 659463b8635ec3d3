import TureenCore

/// Writes one blob as its bytes arrive, holding at most `batchChunks`
/// chunks (8 MiB) in memory, however large the blob. Batches of 2 MiB made
/// an import pay a commit per 2 MiB: 0.67 of the hand-written floor against
/// about 0.8 with 8 MiB (bench/blobs_bench.c).
///
/// Full batches are committed as they fill, each in a short transaction of
/// its own, so a long import does not keep other writers out. Until
/// `finish` names the blob by its digest it is a staging blob that no
/// reader sees; a writer abandoned by a crash leaves one behind, which blob
/// collection removes once its grace period has passed, unless a download
/// of the same blob takes it over first (a download's writer knows the
/// digest it expects, and registers its staging blob in BlobStaging).
public final class BlobWriter: @unchecked Sendable {
    // Unchecked: the staging and hashing state are touched only under `lock`.
    static let batchChunks = 32
    public let store: Store
    private let contentType: String
    /// Serialises calls: the C API lets any thread use a writer.
    private let lock = Lock()
    private var staging: Int64?
    private let hasher: SHA256
    private var pending: [UInt8] = []
    private var chunksWritten = 0
    private var length: Int64 = 0
    private var done = false
    /// A download's: the digest it must hash to and who writes it.
    private let download: (digest: String, owner: LiveOwner)?

    init(store: Store, contentType: String?, download: (digest: String, owner: LiveOwner)? = nil) throws {
        hasher = try SHA256()
        self.store = store
        self.contentType = contentType ?? BlobRef.defaultContentType
        self.download = download
    }

    /// Goes on with a download's staging blob `blob`, already claimed for
    /// `download.owner`: its committed chunks are hashed again in order,
    /// so the digest checked at the end covers the bytes stored, not a
    /// state remembered from another process. Nil (and the blob dropped)
    /// when its chunks are not whole, in order, within `limit` bytes and
    /// readable: a download that failed on them every run would keep them
    /// alive (each takeover touches them) and never complete.
    static func resuming(_ blob: Int64, store: Store, contentType: String, limit: Int64,
                         download: (digest: String, owner: LiveOwner)) throws -> BlobWriter? {
        let w = try BlobWriter(store: store, contentType: contentType, download: download)
        let count = try store.withBlobReader { c in try BlobTables.chunkCount(c, blob: blob) }
        var whole = count * Int64(BlobTables.chunkSize) <= limit
        var seq = 0
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: BlobTables.chunkSize, alignment: 16)
        defer { chunk.deallocate() }
        do {
            while whole && seq < count {
                let n = try store.withBlobReader { c in try BlobTables.readChunk(c, blob: blob, seq: seq, into: chunk) }
                whole = n == BlobTables.chunkSize
                if whole { w.hasher.update(UnsafeRawBufferPointer(chunk)) }
                seq += 1
            }
        } catch let e as TureenError where e.code == .corrupt {
            whole = false
        }
        guard whole else {
            try store.withBlobConnection { c in try c.transaction { try BlobTables.delete(c, blob: blob) } }
            return nil  // `w` goes, and its deinit releases the owner
        }
        w.staging = blob
        w.chunksWritten = Int(count)
        w.length = count * Int64(BlobTables.chunkSize)
        return w
    }

    deinit { download?.owner.release() }

    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        try lock.withLock {
            guard !done else { throw TureenError.misuse("this blob writer is finished or cancelled") }
            var rest = bytes
            let batch = BlobTables.chunkSize * BlobWriter.batchChunks
            while rest.count > 0 {
                let take = min(batch - pending.count, rest.count)
                let part = UnsafeRawBufferPointer(rebasing: rest[0..<take])
                pending.append(contentsOf: part)
                hasher.update(part)
                length += Int64(take)
                rest = UnsafeRawBufferPointer(rebasing: rest[take...])
                if pending.count == batch { try orAbandon { try flush() } }
            }
        }
    }

    /// The bytes written so far.
    public var written: Int64 { lock.withLock { length } }

    /// Names the blob and returns how to refer to it. When these bytes are
    /// stored already, nothing more is written: the blob is shared.
    public func finish(expecting expected: String? = nil) throws -> BlobRef {
        try lock.withLock {
            guard !done else { throw TureenError.misuse("this blob writer is finished or cancelled") }
            done = true
            let digest = try BlobRef.digest(of: hasher.finish())
            // Bytes that are not the blob asked for are not kept at all.
            if let e = expected, e != digest {
                try? dropStaging()
                throw TureenError(.http, "the bytes received for blob \(e) hash to \(digest); they were not kept")
            }
            let row: BlobTables.Row = try orAbandon { try store.withBlobConnection { c in
                try c.transaction {
                    let now = Clock.nowMs()
                    if staging == nil, let old = try BlobTables.find(c, digest: digest) {
                        try BlobTables.touch(c, blob: old.id, now: now)
                        return old
                    }
                    let id = try stagingBlob(c, now: now)
                    try writeChunks(c, blob: id)
                    return try BlobTables.finish(c, blob: id, digest: digest, length: length, now: now)
                }
            } }
            staging = nil
            pending = []
            download?.owner.release()
            return BlobRef(digest: digest, length: row.length, contentType: contentType)
        }
    }

    /// Drops what was written; the writer cannot be used afterwards.
    public func cancel() throws {
        try lock.withLock {
            guard !done else { return }
            try dropStaging()
        }
    }

    /// Stops a download that could not complete, keeping the pieces it
    /// committed for the next download of the same blob to go on from
    /// (the bytes held since the last commit are dropped); any other
    /// writer is cancelled. The writer cannot be used afterwards.
    public func suspend() throws {
        guard let d = download else { return try cancel() }
        let kept: Int64? = lock.withLock {
            defer { staging = nil }
            done = true
            pending = []
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
        pending = []
        defer { download?.owner.release() }
        guard let id = staging else { return }
        staging = nil
        try store.withBlobConnection { c in
            try c.transaction { if try holds(c, id) { try BlobTables.delete(c, blob: id) } }
        }
    }

    /// Whether staging blob `id` is still this writer's: collection may
    /// have removed it, or, for a download, another download taken it over.
    private func holds(_ c: Connection, _ id: Int64) throws -> Bool {
        guard let d = download else { return try BlobTables.isStaging(c, blob: id) }
        return try BlobStaging.owns(c, blob: id, owner: d.owner)
    }

    /// The staging blob to write into in transaction `c`: made (and, for a
    /// download, registered) on first use, and still this writer's: pieces
    /// written after collection removed it, or after another download took
    /// it over, would be kept by nothing or mixed into another's bytes.
    private func stagingBlob(_ c: Connection, now: Int64) throws -> Int64 {
        guard let id = staging else {
            let id = try BlobTables.beginStaging(c, contentType: contentType, now: now)
            if let d = download { try BlobStaging.register(c, blob: id, digest: d.digest, owner: d.owner) }
            return id
        }
        guard try holds(c, id) else {
            // Not this writer's to drop any more.
            staging = nil
            throw TureenError(.busy, "the blob being written was removed by blob collection (or, for a download, taken over by another download of it) before it was complete; write it again")
        }
        return id
    }

    /// Runs `body`; when it fails the writer is spent, and what it had
    /// committed is dropped now if it can be (else collection removes it).
    private func orAbandon<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch {
            try? dropStaging()
            throw error
        }
    }

    /// Commits the full chunks held, and touches the staging blob so that
    /// collection knows its writer is alive.
    private func flush() throws {
        try store.withBlobConnection { c in
            try c.transaction {
                let now = Clock.nowMs()
                let id = try stagingBlob(c, now: now)
                try writeChunks(c, blob: id)
                try BlobTables.touch(c, blob: id, now: now)
                staging = id
            }
        }
        pending.removeAll(keepingCapacity: true)
    }

    private func writeChunks(_ c: Connection, blob: Int64) throws {
        var seq = chunksWritten
        try pending.withUnsafeBytes { all in
            var offset = 0
            while offset < all.count {
                let end = min(offset + BlobTables.chunkSize, all.count)
                try BlobTables.writeChunk(c, blob: blob, seq: seq, UnsafeRawBufferPointer(rebasing: all[offset..<end]))
                seq += 1
                offset = end
            }
        }
        chunksWritten = seq
    }
}
