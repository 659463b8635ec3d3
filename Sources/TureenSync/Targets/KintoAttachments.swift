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
    /// Blobs moved by this run, and their bytes, for the sync state.
    private(set) var moved = 0
    private(set) var bytes: Int64 = 0
    var progress: ((BlobRef, String, Int64) -> Void)?

    init(store: Store, place: Place, senders: (own: RetryingSender, anonymous: RetryingSender)) {
        self.store = store
        self.place = place
        (server, files) = senders
        serverOrigin = URLText.origin(place.records)
    }

    private func recordURL(_ ref: BlobRef) throws -> String { "\(place.records)/\(try BlobRef.hex(ofDigest: ref.digest))" }

    /// The plugin's description of the blob's file, or nil when the server
    /// has no such blob.
    private func attachment(_ ref: BlobRef) throws -> JSONObject? {
        let url = try recordURL(ref)
        let r = try server.send(HTTPRequest(method: "GET", url: url))
        if r.status == 404 || r.status == 403 { return nil }  // Kinto answers 403 for a record it cannot show
        guard r.isSuccess else { throw TureenError(.http, "GET \(url): \(r.summary)") }
        return try r.json().at("data.attachment")?.objectValue
    }

    func holds(_ ref: BlobRef) throws -> Bool {
        let hex = String(try BlobRef.hex(ofDigest: ref.digest))
        guard let a = try attachment(ref) else { return false }
        return a["hash"]?.stringValue == hex && a["size"]?.int64Value == ref.length
    }

    func ensureOnServer(_ ref: BlobRef) throws {
        if try holds(ref) { return }
        let hex = String(try BlobRef.hex(ofDigest: ref.digest))
        let reader = try store.blobReader(ref.digest)
        try ensureCollection()
        let (body, type) = BlobUploadBody.multipart(reader, field: "attachment", fileName: hex + KintoAttachments.fileExtension(ref.contentType),
                                                    contentType: KintoAttachments.safeContentType(ref.contentType))
        body.progress = BlobProgress { [weak self] in self?.progress?(ref, "up", $0) }
        var request = HTTPRequest(method: "POST", url: try recordURL(ref) + "/attachment", headers: [("Content-Type", type)])
        request.upload = body
        let r = try server.send(request)
        guard r.isSuccess else { throw TureenError(.http, "POST \(request.url): uploading blob \(ref.digest) failed: \(r.summary)") }
        guard (try? r.json())?["hash"]?.stringValue == hex else {
            throw TureenError(.http, "POST \(request.url): the server stored blob \(ref.digest) with another hash")
        }
        moved += 1
        bytes += ref.length
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

    func fetch(_ ref: BlobRef) throws {
        guard let a = try attachment(ref), let location = a["location"]?.stringValue else {
            throw TureenError(.notFound, "the server has no blob \(ref.digest) (a record refers to it)")
        }
        guard allowed(location) else {
            throw TureenError(.http, "the server gives blob \(ref.digest) at '\(HeaderText.printable(String(location.prefix(200))))', outside the target's attachments_url (or the server's origin); it was not fetched")
        }
        try BlobDownload.fetch(ref, from: location, sender: { self.allowed($0) ? self.files : nil }, store: store) { [weak self] in
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
