import TureenStore
import TureenCore

/// What tureen_reencrypt did.
public struct ReencryptResult: Sendable {
    /// Records sealed again under the first key.
    public var reencrypted = 0
    /// Records left as they were: changed or deleted on the server since
    /// they were read, or not opening under any listed key.
    public var skipped = 0

    public var text: String {
        JSON.object(JSONObject([("reencrypted", .int(Int64(reencrypted))), ("skipped", .int(Int64(skipped)))])).text
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
        var result = ReencryptResult()
        var next: JSON?
        var trail = PageTrail(of: "reencrypt")
        repeat {
            let page = try target.fetch(since: nil, next: next)
            var changes: [Change] = []
            for r in page.records where !target.isTombstone(r) && RecordEnvelope.needsReencrypt(r, under: keys) {
                guard let c = try resealed(r, keys: keys, collection: config.sealedCollection, target: target) else {
                    result.skipped += 1
                    continue
                }
                changes.append(c)
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
        return result
    }

    /// The change that seals `record` (an envelope under another key, or a
    /// record in clear) under the first key; nil when it does not open.
    private func resealed(_ record: JSONObject, keys: EnvelopeKeys, collection: String, target: SyncTarget) throws -> Change? {
        guard let id = record["id"]?.stringValue else { return nil }
        var fields: JSONObject
        if RecordEnvelope.keyId(of: record) != nil {
            do {
                fields = try RecordEnvelope.open(serverRecord: record, id: id, collection: collection, keys: keys)
            } catch let e as TureenError where e.code == .corrupt || e.code == .key {
                return nil
            }
        } else {
            fields = record
        }
        // The server stamps the write; the stamp read goes as the precondition.
        fields["last_modified"] = nil
        let sealed = try RecordEnvelope.seal(record: fields, id: id, collection: collection, keys: keys)
        return Change(kind: .update, id: id, record: sealed, partial: false, ifMatch: target.version(of: record), base: record)
    }
}
