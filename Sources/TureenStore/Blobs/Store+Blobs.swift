import Glibc
import TureenCore

/// Blobs: bytes stored beside the entries, named by their SHA-256 and
/// shared by every entry that refers to them (see BlobTables for what the
/// store knows of them, BlobDirectory and SealedBlob for their files,
/// BlobRef for how entries refer to them).
extension Store {
    /// How long an unreferenced blob is kept by default: the time an app may
    /// take between storing a blob and writing the entry that refers to it.
    /// Like git's prune expiry, it is what makes collecting safe beside
    /// writers that are between the two steps.
    public static let blobGraceMs: Int64 = 3_600_000

    /// Runs `body` with the writer, the blob tables made on first use.
    func withBlobConnection<T>(_ body: (Connection) throws -> T) throws -> T {
        try withConnection { c in
            try ensureBlobTables(c)
            return try body(c)
        }
    }

    /// Runs read-only `body` beside writers. A page that fails to decrypt
    /// or authenticate is damage, reported as such (SQLCipher says only
    /// "SQL logic error" or "not a database").
    func withBlobReader<T>(_ body: (Connection) throws -> T) throws -> T {
        if !blobTablesReady { try withBlobConnection { _ in } }
        do {
            return try withReader(body)
        } catch let e as TureenError where e.code == .internal || e.code == .key {
            throw TureenError(.corrupt, "the store '\(path)' is damaged: reading a blob failed (\(e.message))")
        }
    }

    private func ensureBlobTables(_ c: Connection) throws {
        guard !blobTablesReady else { return }
        let outer = c.inTransaction
        try c.transaction { try BlobTables.install(c) }
        // Made inside a caller's transaction, the tables stand or fall
        // with it: only tables made outside one are known to stay.
        if !outer { blobTablesReady = true }
    }

    /// A writer for a new blob; nothing is visible until it finishes.
    public func blobWriter(contentType: String?) throws -> BlobWriter {
        try withBlobConnection { _ in }  // fails now, not later, on a closed store
        return try BlobWriter(store: self, contentType: contentType)
    }

    /// A writer for a download of `ref`. `resuming`, it goes on from the
    /// whole chunks that an earlier download of the same blob wrote to its
    /// staging file and left behind (its process killed, or its run failed)
    /// when that writer is gone: those that still open, up to the first
    /// that does not (BlobWriter.resuming); else it starts afresh.
    /// `written` says from where.
    public func downloadWriter(for ref: BlobRef, resuming: Bool = true) throws -> BlobWriter {
        try withBlobConnection { _ in }  // fails now, not later, on a closed store
        if resuming, let w = try takeOver(ref) { return w }
        return try BlobWriter(store: self, contentType: ref.contentType, download: (ref.digest, LiveOwner.make()))
    }

    /// A writer going on from a staging blob of `ref` whose writer is gone,
    /// claimed in a write transaction; nil when there is none (or its
    /// pieces cannot be taken up). Most downloads find nothing, which a
    /// reader says without taking the writer's lock.
    private func takeOver(_ ref: BlobRef) throws -> BlobWriter? {
        guard try withBlobReader({ c in try !BlobStaging.candidates(c, digest: ref.digest).isEmpty }) else { return nil }
        let owner = LiveOwner.make()
        let claimed: Int64? = try withBlobConnection { c in
            try c.transaction {
                for found in try BlobStaging.candidates(c, digest: ref.digest)
                where !(LiveOwner(text: found.owner)?.isAlive ?? false) {
                    try BlobStaging.claim(c, blob: found.blob, owner: owner)
                    try BlobTables.touch(c, blob: found.blob, now: Clock.nowMs())
                    return found.blob
                }
                return nil
            }
        }
        guard let blob = claimed else {
            owner.release()
            return nil
        }
        return try BlobWriter.resuming(blob, store: self, contentType: ref.contentType, limit: ref.length,
                                       download: (ref.digest, owner))
    }

    public func putBlob(_ bytes: UnsafeRawBufferPointer, contentType: String?) throws -> BlobRef {
        let w = try blobWriter(contentType: contentType)
        try w.write(bytes)
        return try w.finish()
    }

    /// The stored blob named `digest`, or nil.
    public func blob(_ digest: String) throws -> BlobRef? {
        _ = try BlobRef.hex(ofDigest: digest)
        return try withBlobReader { c in
            try BlobTables.find(c, digest: digest).map { BlobRef(digest: digest, length: $0.length, contentType: $0.contentType) }
        }
    }

    /// A reader of the blob named `digest`; NOT_FOUND when it is not here.
    public func blobReader(_ digest: String) throws -> BlobReader {
        _ = try BlobRef.hex(ofDigest: digest)
        guard let row = try withBlobReader({ c in try BlobTables.find(c, digest: digest) }) else {
            throw TureenError(.notFound, "no blob \(digest) in '\(path)'")
        }
        guard (0...SealedBlob.maxLength).contains(row.length) else { throw TureenError(.corrupt, "blob \(digest) in '\(path)' is damaged: its length is \(row.length)") }
        let chunks: BlobChunks = row.inFile
            ? FileChunks(path: blobDirectory.file(row.id), id: row.id, length: row.length,
                         key: try withBlobReader { c in try BlobKey.load(c) })
            : RowChunks(store: self, blob: row.id)
        return try BlobReader(store: self, ref: BlobRef(digest: digest, length: row.length, contentType: row.contentType), chunks: chunks)
    }

    /// Stores the file at `file`, read in pieces.
    public func importBlob(path file: String, contentType: String?) throws -> BlobRef {
        let w = try blobWriter(contentType: contentType)
        do {
            let fd = try BlobFile.openToRead(file)
            defer { Glibc.close(fd) }
            try w.write(readingFrom: fd, path: file)
            return try w.finish()
        } catch {
            try? w.cancel()
            throw error
        }
    }

    /// Removes the blobs no entry refers to that are older than
    /// `minAgeMs`, and the pieces of writes that were abandoned as long ago;
    /// returns how many went. It runs in one write transaction, so no entry
    /// is written while it decides.
    ///
    /// Files go after the rows that name them: a crash in between leaves
    /// files that no row names, which the next collection removes (while it
    /// holds the write lock, so no writer is between making a row and its
    /// file). Inside a caller's transaction, which may still roll back,
    /// files are left to a later collection.
    public func collectBlobs(minAgeMs: Int64 = Store.blobGraceMs) throws -> Int64 {
        guard minAgeMs >= 0 else { throw TureenError.invalid("min_age_ms must not be negative (got \(minAgeMs))") }
        let directory = blobDirectory
        return try withBlobConnection { c in
            let nested = c.inTransaction
            var gone: [Int64] = []
            try c.transaction {
                let named = try BlobTables.ids(c)
                var referenced = Set<String>()
                try BlobTables.referringTexts(c) { BlobRef.digests(inText: $0, into: &referenced) }
                try BlobTables.forgetWanted(c, keeping: referenced)
                for b in try BlobTables.olderThan(c, Clock.nowMs() - minAgeMs) {
                    if let d = b.digest, referenced.contains(d) { continue }
                    try BlobTables.delete(c, blob: b.id)
                    gone.append(b.id)
                }
                if !nested {
                    for id in directory.ids() where !named.contains(id) { directory.remove(id) }
                }
            }
            if !nested { gone.forEach(directory.remove) }
            return Int64(gone.count)
        }
    }

    /// The minimum age that collection options ({"min_age_ms": N}, or nil
    /// for the default) ask for.
    public static func blobCollectAge(options: String?) throws -> Int64 {
        guard let text = options else { return blobGraceMs }
        guard case .object(let o) = try JSONParser.parse(text) else {
            throw TureenError.invalid("blob collection options must be a JSON object")
        }
        for k in o.keys where k != "min_age_ms" { throw TureenError.invalid("unknown blob collection option '\(k)'") }
        guard let v = o["min_age_ms"] else { return blobGraceMs }
        guard let n = v.int64Value, n >= 0 else { throw TureenError.invalid("min_age_ms must be an integer of 0 or more") }
        return n
    }

    /// Notes that an entry an engine wrote refers to `ref`, to be fetched
    /// later by whatever the engine's tag `owner` names.
    public func wantBlob(_ ref: BlobRef, owner: Int64, _ t: StoreTransaction) throws {
        try ensureBlobTables(t.connection)
        try BlobTables.want(t.connection, ref, owner: owner)
    }

    /// Notes as awaited, tagged `owner`, every blob `value` refers to that
    /// is neither stored here nor awaited already. A server's copy an
    /// engine takes outside its usual path (a sync up's answer, a
    /// conflict's "theirs") may refer to blobs another device added: they
    /// are fetched on first read, instead of being pointed at and never
    /// fetched. A reference the store would refuse is TUREEN_E_INVALID,
    /// and nothing is noted: a malformed one, or one whose length is not
    /// that of the blob stored here under its digest (the entry would
    /// disagree with the bytes it refers to, as requireBlobs refuses).
    public func awaitBlobs(of value: JSON, owner: Int64, _ t: StoreTransaction) throws {
        let refs = try BlobRef.all(in: value)
        guard !refs.isEmpty else { return }
        let c = t.connection
        try ensureBlobTables(c)
        var wanted: [BlobRef] = []
        for r in refs {
            if let row = try BlobTables.find(c, digest: r.digest) {
                guard row.length == r.length else {
                    throw TureenError.invalid("the reference to blob \(r.digest) gives length \(r.length), but the blob stored here holds \(row.length) bytes")
                }
            } else if try BlobTables.wantedBy(c, digest: r.digest) == nil {
                wanted.append(r)
            }
        }
        for r in wanted { try BlobTables.want(c, r, owner: owner) }
    }

    /// The tag of whoever can fetch the missing blob `digest`, and the
    /// reference it noted, if any.
    public func blobWanted(_ digest: String) throws -> (owner: Int64, ref: BlobRef)? {
        _ = try BlobRef.hex(ofDigest: digest)
        return try withBlobReader { c in try BlobTables.wantedBy(c, digest: digest) }
    }

    /// Fails unless every blob `entry` refers to is stored here (with the
    /// length the reference states) or awaited (`wantBlob`): an entry must
    /// never point at bytes that are nowhere. The app's writes of entries
    /// call it; an engine writing the server's copies does not: it notes
    /// the blobs it awaits itself.
    public func requireBlobs(of entry: JSON, _ t: StoreTransaction) throws {
        try requireBlobs(of: entry, t.connection)
    }

    func requireBlobs(of entry: JSON, _ c: Connection) throws {
        let refs = try BlobRef.all(in: entry)
        guard !refs.isEmpty else { return }
        try ensureBlobTables(c)
        for r in refs {
            if let row = try BlobTables.find(c, digest: r.digest) {
                guard row.length == r.length else {
                    throw TureenError.invalid("the reference to blob \(r.digest) gives length \(r.length), but the blob holds \(row.length) bytes")
                }
            } else if try BlobTables.wantedBy(c, digest: r.digest) == nil {
                throw TureenError(.notFound, "no blob \(r.digest) in this store: store it (\(callNames[.blobPut])) before the entry that refers to it")
            }
        }
    }
}
