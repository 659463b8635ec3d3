import TureenStore
import TureenCore

/// What tureen_reencrypt did.
public struct ReencryptResult: Sendable {
    /// Records sealed again under the first key.
    public var reencrypted = 0
    /// Records left as they were: changed or deleted on the server since
    /// they were read, or not opening under any listed key.
    public var skipped = 0
    /// Blobs uploaded again, sealed under the first key.
    public var blobs = 0

    public var text: String {
        JSON.object(JSONObject([("reencrypted", .int(Int64(reencrypted))), ("skipped", .int(Int64(skipped))),
                                ("blobs", .int(Int64(blobs)))])).text
    }
}

extension SyncManager {
    /// Seals every record of an "encryption" target's collection that is
    /// not sealed under its first key (under an older key, or in clear)
    /// again under it. Each write carries the target's precondition (Kinto:
    /// If-Match on the stamp read), so a record changed meanwhile is left
    /// to the device that changed it, which sealed it with its own keys.
    /// A write the server refuses otherwise ends the call: what was
    /// written stays so, and a second call goes on from there.
    ///
    /// On a target with blobs, every record that opens is read for the
    /// blobs it refers to (one under the first key already may refer to a
    /// blob sealed under an older one): see BlobResealing. A page's blobs are resealed before
    /// its records are written, and the older names removed at the end.
    public func reencrypt(_ spec: TargetSpec) throws -> ReencryptResult {
        guard case .http(let config) = try TargetKinds.parse(spec.json), let keys = config.encryption else {
            throw TureenError.invalid("reencrypt needs a kinto or rest target with an \"encryption\" member")
        }
        // The server's records as they are: opened and sealed here, not by a pipeline.
        let target = try makeTarget(spec.json, cancel: CancelFlag()) { c in
            c.encryption = nil
            c.transformers = []
        }
        try target.readServerLimits()
        let blobs = try blobResealing(target, keys: keys)
        var result = ReencryptResult()
        var next: JSON?
        var trail = PageTrail(of: "reencrypt")
        repeat {
            let page = try target.fetch(since: nil, next: next)
            var changes: [Change] = []
            for r in page.records where !target.isTombstone(r) {
                let needed = RecordEnvelope.needsReencrypt(r, under: keys)
                // Opened only to be sealed again, or to find blobs to reseal.
                guard needed || blobs != nil else { continue }
                guard let id = r["id"]?.stringValue, let fields = try opened(r, id: id, keys: keys, collection: config.sealedCollection) else {
                    if needed { result.skipped += 1 }
                    continue
                }
                // A reference the store would refuse fails the record on
                // every device (see SyncRun.blobsBeforeCommit): no blob to move.
                if let blobs, let refs = try? BlobRef.all(in: .object(fields)) { try blobs.reseal(refs) }
                if needed { changes.append(try resealed(fields, id: id, keys: keys, collection: config.sealedCollection, read: r, target: target)) }
            }
            var start = 0
            while start < changes.count {
                let batch = Array(changes[start..<min(start + max(target.batchSize, 1), changes.count)])
                start += batch.count
                for outcome in try target.push(batch) {
                    switch outcome {
                    case .applied: result.reencrypted += 1
                    case .conflict, .notFound: result.skipped += 1
                    case .rejected(let e): throw e
                    }
                }
            }
            try trail.follow(page.next)
            next = page.next
        } while next != nil
        try blobs?.removeOlderNames()
        result.blobs = blobs?.resealed ?? 0
        return result
    }

    /// The mover for the target's blobs, sealing them under `keys` (the
    /// target was made without them, to read records as they are); nil
    /// when the target keeps no blobs.
    private func blobResealing(_ target: SyncTarget, keys: EnvelopeKeys) throws -> BlobResealing? {
        guard let hosting = target.blobHosting else { return nil }
        let mover = try hosting.blobMover(store: store, cancel: CancelFlag(parent: serverCalls.closing), sealedUnder: keys)
        return BlobResealing(mover: mover, store: store)
    }

    /// The record's fields: opened (an envelope, under any listed key) or
    /// as they are (a record in clear); nil when it does not open.
    private func opened(_ record: JSONObject, id: String, keys: EnvelopeKeys, collection: String) throws -> JSONObject? {
        guard RecordEnvelope.keyId(of: record) != nil else { return record }
        do {
            return try RecordEnvelope.open(serverRecord: record, id: id, collection: collection, keys: keys)
        } catch let e as TureenError where e.code == .corrupt || e.code == .key {
            return nil
        }
    }

    /// The change that seals `fields` (`read`, opened) under the first key.
    private func resealed(_ fields: JSONObject, id: String, keys: EnvelopeKeys, collection: String, read: JSONObject,
                          target: SyncTarget) throws -> Change {
        var fields = fields
        // The server stamps the write; the stamp read goes as the precondition.
        fields["last_modified"] = nil
        let sealed = try RecordEnvelope.seal(record: fields, id: id, collection: collection, keys: keys)
        return Change(kind: .update, id: id, record: sealed, partial: false, ifMatch: target.version(of: read), base: read)
    }
}
