import TureenStore
import TureenCore

/// tureen_reencrypt's part for blobs: a blob that a record refers to and
/// that the server holds only under an older key's name is uploaded again
/// under the first key's, so that a device listing only the first key
/// opens it; the older names go once every record has been read.
final class BlobResealing {
    private let mover: BlobMover
    private let store: Store
    private var seen = Set<String>()
    /// Blobs held under an older key's name (by its index among the keys)
    /// as well as under the first's: removed by `removeOlderNames`.
    private var older: [(ref: BlobRef, keyIndex: Int)] = []
    /// Blobs uploaded under the first key's name.
    private(set) var resealed = 0

    init(mover: BlobMover, store: Store) {
        self.mover = mover
        self.store = store
    }

    /// Puts each blob of `refs` under the first key's name, unless the
    /// server holds it there already or under no name at all (its record
    /// fails on every device, as before). The bytes uploaded are the
    /// store's, read and verified against the digest as they go: this
    /// store's own copy, or one fetched now (opened with the key that
    /// sealed it, verified, and written to the store as it comes; nothing
    /// refers to it there, so collection removes it after its grace period).
    func reseal(_ refs: [BlobRef]) throws {
        for r in refs where seen.insert(r.digest).inserted {
            let held = try mover.heldNames(r)
            let olderHeld = held.indices.dropFirst().filter { held[$0] }
            guard !olderHeld.isEmpty else { continue }
            if held.first != true {
                if try store.blob(r.digest) == nil { try mover.fetch(r) }
                try mover.upload(r)
                resealed += 1
            }
            older += olderHeld.map { (r, $0) }
        }
    }

    /// Removes the blobs under older keys' names, once every record was
    /// rewritten under the first key: from then on every record referring
    /// to such a blob is read by devices listing the first key, which find
    /// it under that key's name first.
    func removeOlderNames() throws {
        for (r, keyIndex) in older { try mover.remove(r, keyIndex: keyIndex) }
        older = []
    }
}
