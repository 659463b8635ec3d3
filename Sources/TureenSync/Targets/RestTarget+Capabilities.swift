import TureenStore
import TureenCore

/// What an HTTP target can do beyond records, as its configuration declares.
extension RestTarget: TargetContainers, FeedCounting, ParallelUploads, BlobHosting, CredentialRefresh, RecordReads {
    var containers: TargetContainers? { config.ensure.isEmpty ? nil : self }
    var counting: FeedCounting? { config.countWithHead ? self : nil }
    var parallelUploads: ParallelUploads? { config.uploadConnections > 1 ? self : nil }
    var blobHosting: BlobHosting? { config.blobs == nil ? nil : self }
    var credentialRefresh: CredentialRefresh? { self }
    var recordReads: RecordReads? { self }

    var uploadConnections: Int { config.uploadConnections }

    /// Creates the Kinto bucket and collection when asked; a 412 means it exists.
    func ensure() throws {
        for url in config.ensure {
            let r = try send(HTTPRequest(method: "PUT", url: url, headers: [("If-None-Match", "*")], body: Array("{}".utf8)))
            guard r.isSuccess || r.status == 412 else { throw TureenError(.http, "PUT \(url): \(r.summary)") }
        }
    }

    func blobMover(store: Store, cancel: CancelFlag) throws -> BlobMover {
        try blobMover(store: store, cancel: cancel, sealedUnder: config.encryption)
    }

    func blobMover(store: Store, cancel: CancelFlag, sealedUnder keys: EnvelopeKeys?) throws -> BlobMover {
        guard let place = config.blobs else {
            throw TureenError(.internal, "a target without a place for blobs was asked to move one")
        }
        return try place.mover(store: store, target: self, cancel: cancel, keys: keys)
    }
}
