import TureenStore
import TureenCore

/// Blobs on a Kinto server with the kinto-attachment plugin.
///
/// The plugin gives a record one attached file; an entry may refer to many
/// blobs, and many entries to one. So each blob is a record of a companion
/// collection (by default "<collection>-blobs"), whose id is the hex of the
/// blob's SHA-256 and whose attachment holds the bytes: uploaded once
/// however many records share it, and found again by name. The plugin
/// stores the attachment's SHA-256 ("hash") and size, which are checked
/// before an upload is skipped, and every download is hashed again here.
///
/// Files are downloaded from where the plugin says ("location"), only under
/// the target's "attachments_url" or, without one, on the Kinto server's own
/// origin, and never with the target's credentials: a server cannot send
/// the host, or its password, elsewhere.
///
/// On a target with "encryption" (BlobSealing) a blob's record id is its
/// server name under a key, its file is the sealed bytes, named
/// "<server name>.bin" and typed application/octet-stream, and the plugin's
/// "hash" and "size" are the sealed bytes'.
final class KintoAttachments: BlobMover {
    struct Place {
        /// The companion collection's records URL.
        var records: String
        /// Where files may be downloaded from (a URL prefix).
        var filesURL: String?
        /// Create the collection before the first upload (the target's "create").
        var create = false
    }

    private let store: Store
    private let place: Place
    private let server: RetryingSender
    private let files: RetryingSender
    private let serverOrigin: String
    private let sealing: BlobSealing?
    /// Blobs moved by this run, and their bytes, for the sync state.
    private(set) var moved = 0
    private(set) var bytes: Int64 = 0
    var progress: ((BlobRef, String, Int64) -> Void)?

    init(store: Store, place: Place, senders: (own: RetryingSender, anonymous: RetryingSender), sealing: BlobSealing?) {
        self.store = store
        self.place = place
        self.sealing = sealing
        (server, files) = senders
        serverOrigin = URLText.origin(place.records)
    }

    /// The blob's record names on the server: the hex of its digest, or
    /// under encryption its server name under each key, the first key's
    /// first (the one it is uploaded under).
    private func names(_ ref: BlobRef) throws -> [(hex: String, keyId: String?)] {
        if let sealing { return try sealing.names(ref).map { ($0.hex, $0.keyId) } }
        return [(String(try BlobRef.hex(ofDigest: ref.digest)), nil)]
    }

    private func recordURL(_ name: String) -> String { "\(place.records)/\(name)" }

    /// The plugin's description of the file under `name`, or nil when the
    /// server has no such blob.
    private func attachment(_ name: String) throws -> JSONObject? {
        let url = recordURL(name)
        let r = try server.send(HTTPRequest(method: "GET", url: url))
        if r.status == 404 || r.status == 403 { return nil }  // Kinto answers 403 for a record it cannot show
        guard r.isSuccess else { throw TureenError(.http, "GET \(url): \(r.summary)") }
        return try r.json().at("data.attachment")?.objectValue
    }

    /// Whether the server holds the blob whole under one of its names: the
    /// plugin's hash is the digest (a sealed file's cannot be known before
    /// it is sealed, so only its size is checked; opening it checks the rest).
    func holds(_ ref: BlobRef) throws -> Bool {
        for (name, keyId) in try names(ref) where try holds(ref, name: name, keyId: keyId) { return true }
        return false
    }

    func heldNames(_ ref: BlobRef) throws -> [Bool] {
        try names(ref).map { try holds(ref, name: $0.hex, keyId: $0.keyId) }
    }

    private func holds(_ ref: BlobRef, name: String, keyId: String?) throws -> Bool {
        guard let a = try attachment(name) else { return false }
        if let keyId, let sealing {
            guard let sealed = sealing.sealedLength(ref, keyId: keyId) else { return false }
            return a["size"]?.int64Value == sealed
        }
        return a["hash"]?.stringValue == name && a["size"]?.int64Value == ref.length
    }

    func ensureOnServer(_ ref: BlobRef) throws {
        if try holds(ref) { return }
        try upload(ref)
    }

    func upload(_ ref: BlobRef) throws {
        guard let name = try names(ref).first?.hex else { return }
        let reader = try store.blobReader(ref.digest)
        try ensureCollection()
        let source: UploadBytes = try sealing.map { try SealedUpload(reader, keys: $0.keys) } ?? reader
        let fileName = name + (sealing == nil ? KintoAttachments.fileExtension(ref.contentType) : ".bin")
        let contentType = sealing == nil ? KintoAttachments.safeContentType(ref.contentType) : BlobSealing.contentType
        let (body, type) = BlobUploadBody.multipart(source, hex: name, field: "attachment", fileName: fileName, contentType: contentType)
        // Sealed bytes outnumber the blob's by their header and tags: progress counts the blob's.
        body.progress = BlobProgress { [weak self] in self?.progress?(ref, "up", min($0, ref.length)) }
        var request = HTTPRequest(method: "POST", url: recordURL(name) + "/attachment", headers: [("Content-Type", type)])
        request.upload = body
        let r = try server.send(request)
        guard r.isSuccess else { throw TureenError(.http, "POST \(request.url): uploading blob \(ref.digest) failed: \(r.summary)") }
        let sent = (source as? SealedUpload)?.sealedDigest ?? name
        guard (try? r.json())?["hash"]?.stringValue == sent else {
            throw TureenError(.http, "POST \(request.url): the server stored blob \(ref.digest) with another hash")
        }
        moved += 1
        bytes += ref.length
    }

    /// Deleting the blob's record has the plugin delete its file (unless
    /// the server keeps old files: attachment.keep_old_files).
    func remove(_ ref: BlobRef, keyIndex: Int) throws {
        let all = try names(ref)
        guard all.indices.contains(keyIndex) else { return }
        let url = recordURL(all[keyIndex].hex)
        let r = try server.send(HTTPRequest(method: "DELETE", url: url))
        guard r.isSuccess || r.status == 404 || r.status == 410 else {
            throw TureenError(.http, "DELETE \(url): removing blob \(ref.digest) under an older key's name failed: \(r.summary)")
        }
    }

    /// Creates the companion collection once, when the target asks for
    /// containers to be made: only a sync that uploads a blob needs it.
    private var collectionReady = false
    private func ensureCollection() throws {
        guard place.create, !collectionReady else { return }
        let url = String(place.records.dropLast("/records".count))
        let r = try server.send(HTTPRequest(method: "PUT", url: url, headers: [("If-None-Match", "*")], body: Array("{}".utf8)))
        guard r.isSuccess || r.status == 412 else { throw TureenError(.http, "PUT \(url): \(r.summary)") }
        collectionReady = true
    }

    func download(_ ref: BlobRef) throws {
        // The first name the server has a file under: what it sends is checked as it comes.
        var a: JSONObject?
        for name in try names(ref) where a == nil { a = try attachment(name.hex) }
        guard let a, let location = a["location"]?.stringValue else {
            if let sealing { throw sealing.notOnServer(ref) }
            throw TureenError(.notFound, "the server has no blob \(ref.digest) (a record refers to it)")
        }
        guard allowed(location) else {
            throw TureenError(.http, "the server gives blob \(ref.digest) at '\(HeaderText.printable(String(location.prefix(200))))', outside the target's attachments_url (or the server's origin); it was not fetched")
        }
        try BlobDownload.fetch(ref, from: location, sender: { self.allowed($0) ? self.files : nil }, store: store,
                               sealing: sealing) { [weak self] in
            self?.progress?(ref, "down", $0)
        }
        moved += 1
        bytes += ref.length
    }

    private func allowed(_ url: String) -> Bool {
        URLText.isUnder(url, anyOf: [place.filesURL ?? serverOrigin + "/"])
    }

    /// A file name extension the plugin's default list accepts, when the
    /// type has one; others need the server to allow any extension
    /// (attachment.extensions = any).
    static func fileExtension(_ contentType: String) -> String {
        let known = ["image/jpeg": ".jpg", "image/png": ".png", "image/gif": ".gif", "image/svg+xml": ".svg",
                     "application/pdf": ".pdf", "text/plain": ".txt", "application/json": ".json", "text/csv": ".csv",
                     "application/xml": ".xml", "text/xml": ".xml"]
        return known[contentType.lowercased()] ?? ".bin"
    }

    /// The content type as a header value may carry it.
    static func safeContentType(_ t: String) -> String {
        t.utf8.allSatisfy({ HeaderText.isValueByte($0) && $0 != 0x22 }) && !t.isEmpty ? t : BlobRef.defaultContentType
    }
}
