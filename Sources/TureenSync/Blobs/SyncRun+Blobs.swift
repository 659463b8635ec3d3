import TureenStore
import TureenCore

/// The blobs that records refer to travel with them: up before the record
/// that refers to them, down before (eager) or after (lazy) it, so that
/// neither side ever holds a record pointing at bytes that are nowhere.
extension SyncRun {
    /// The target's way to move blobs, when it has one (Kinto with the
    /// attachment plugin, or a REST target's "blobs").
    func attachments() throws -> BlobMover? {
        if let a = blobMover { return a }
        guard let mover = try target.blobHosting?.blobMover(store: store, cancel: cancel) else { return nil }
        mover.progress = { [weak self] ref, direction, done in self?.blobProgress(ref, direction: direction, done: done) }
        blobMover = mover
        return mover
    }

    /// Sync up: puts on the server every blob these changes refer to. A
    /// blob not stored here (a lazy sync down awaits it) has nothing to
    /// upload: its change goes if the server holds it. If not, that change
    /// alone cannot go (its record would point at bytes that are nowhere):
    /// its error is returned under its index, and the others still go.
    func uploadBlobs(_ changes: [Change]) throws -> [Int: TureenError] {
        var refused: [Int: TureenError] = [:]
        for (i, c) in changes.enumerated() where c.kind != .delete {
            let refs = try BlobRef.all(in: .object(c.record))
            guard !refs.isEmpty else { continue }
            guard let mover = try attachments() else { continue }
            for r in refs {
                try cancel.check()
                if try store.blob(r.digest) == nil {
                    if try mover.holds(r) { continue }
                    refused[i] = TureenError(.notFound, "not sent: it refers to blob \(r.digest), which is neither stored here (a lazy sync down awaits it, or it was never fetched) nor on the server")
                    break
                }
                let before = mover.moved
                try mover.ensureOnServer(r)
                if mover.moved > before { blobMoved(r, direction: "up", mover) }
            }
        }
        return refused
    }

    /// Sync down, before a page commits: the blobs its records refer to
    /// that this store lacks. Eager, they are fetched now (the page fails
    /// if one cannot be); lazy, they are returned to be noted as awaited
    /// in the page's transaction. A reference whose length is not its
    /// blob's (stored here, or given by another reference) fails the page:
    /// the entry would disagree with the bytes it refers to. A record with
    /// a reference the store refuses (see BlobRef.from: a digest that is
    /// not "sha256-" and 64 lowercase hex digits, a length that is not an
    /// integer of 0 or more) is the server's fault, not the page's: its
    /// index is returned in `refused`, to fail it alone. So is, in
    /// `failed` with its error, a record whose sealed blob (an encrypted
    /// target's) does not open, or opens to other bytes (TUREEN_E_CORRUPT),
    /// or is sealed under no listed key (TUREEN_E_KEY): the server's doing,
    /// which fetching again would not mend. The same codes from this
    /// device (the store's blob key missing or damaged) fail the page.
    func blobsBeforeCommit(_ records: [JSONObject]) throws -> (awaited: [BlobRef], refused: Set<Int>, failed: [Int: TureenError]) {
        var missing: [BlobRef] = []
        var refused = Set<Int>()
        var lengths: [String: Int64] = [:]
        var referrers: [String: [Int]] = [:]
        for (n, record) in records.enumerated() where !target.isTombstone(record) {
            let refs: [BlobRef]
            do {
                refs = try BlobRef.all(in: .object(record))
            } catch let e as TureenError where e.code == .invalid {
                refused.insert(n)
                continue
            }
            for r in refs {
                referrers[r.digest, default: []].append(n)
                if lengths[r.digest] == nil {
                    let stored = try store.blob(r.digest)
                    lengths[r.digest] = stored?.length ?? r.length
                    if stored == nil { missing.append(r) }
                }
                guard lengths[r.digest] == r.length else {
                    throw TureenError(.http, "a record refers to blob \(r.digest) with length \(r.length), where the blob stored here or another reference in the page gives \(lengths[r.digest] ?? 0); the page was not kept")
                }
            }
        }
        guard !missing.isEmpty, !state.options.lazyBlobs, let mover = try attachments() else { return (missing, refused, [:]) }
        var failed: [Int: TureenError] = [:]
        for r in missing {
            try cancel.check()
            do {
                try mover.download(r)
            } catch let f as ServedBlobFault {
                for n in referrers[r.digest] ?? [] where failed[n] == nil { failed[n] = f.error }
                continue
            }
            blobMoved(r, direction: "down", mover)
        }
        return ([], refused, failed)
    }

    /// Part of a blob moved: the state counts it, and listeners hear.
    private func blobProgress(_ r: BlobRef, direction: String, done: Int64) {
        guard let mover = blobMover else { return }
        state.blobBytes = mover.bytes + done
        event(.blobProgress, [("digest", .string(r.digest)), ("length", .int(r.length)), ("direction", .string(direction)),
                              ("done", .int(done))])
        report()
    }

    private func blobMoved(_ r: BlobRef, direction: String, _ mover: BlobMover) {
        state.blobs = mover.moved
        state.blobBytes = mover.bytes
        event(.blobTransferred, [("digest", .string(r.digest)), ("length", .int(r.length)), ("direction", .string(direction))])
        report()
    }
}
