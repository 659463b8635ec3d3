import TureenStore
import TureenCore

/// Blobs on a plain REST API, by URL templates the target declares:
/// each blob at its own URL (its digest in it), asked for with HEAD before
/// an upload, read with GET, and uploaded by PUT or POST of the bytes, or
/// by a multipart form, to that URL or to a separate upload URL.
///
/// The target's credentials and headers go only to URLs on the target's
/// own origin: a blob URL elsewhere (a file server, a CDN) is asked
/// without them, so declaring one never hands the API key to it.
///
/// On a target with "encryption" (BlobSealing) the blob's name in the URL
/// is its server name under a key ({hex}: 64 hex digits; {digest}:
/// "hmac-sha256-" and them), the bytes are sealed, and their Content-Type
/// is application/octet-stream.
final class RestBlobs: BlobMover {
    enum Upload: Equatable {
        case raw(method: String)         // the bytes as the body, with the blob's Content-Type
        case multipart(field: String)    // POST multipart/form-data, the bytes as the part `field`
    }

    struct Place {
        /// Where a blob is read and checked: "{hex}" or "{digest}" in it.
        var url: String
        /// Where a blob is uploaded (defaults to `url`).
        var uploadURL: String
        var upload: Upload
        /// Ask with HEAD whether the server holds a blob before uploading it.
        var check: Bool
        /// URL prefixes a download may be redirected to, beyond the blob
        /// URL's own origin (a CDN, a bucket's signed URLs).
        var redirects: [String]

        /// The members of a "rest" target's "blobs" object.
        static func parse(_ value: JSON) throws -> Place {
            var r = try ConfigReader(value, "target blobs")
            let url = try r.requiredString("url")
            let uploadURL = try r.string("uploadUrl") ?? url
            let upload: Upload
            switch try r.string("upload") ?? "put" {
            case "put": upload = .raw(method: "PUT")
            case "post": upload = .raw(method: "POST")
            case "multipart":
                let field = try r.string("field") ?? "file"
                guard !field.isEmpty, field.utf8.allSatisfy(HeaderText.isTokenByte) else {
                    throw TureenError.invalid("target blobs \"field\" must be a name of letters, digits and !#$%&'*+-.^_`|~ (it goes into a multipart header)")
                }
                upload = .multipart(field: field)
            case let other: throw TureenError.invalid("target blobs \"upload\" is \"put\", \"post\" or \"multipart\", not '\(HeaderText.printable(other))'")
            }
            if case .raw = upload, r.raw("field") != nil {
                throw TureenError.invalid("target blobs \"field\" names a multipart part; it needs \"upload\": \"multipart\"")
            }
            let check = try r.bool("check") ?? true
            let redirects = try r.stringList("redirects") ?? []
            for prefix in redirects {
                try URLText.checkTargetURL(prefix)
                guard prefix.dropFirst(URLText.origin(prefix).count).hasPrefix("/") else {
                    throw TureenError.invalid("target blobs \"redirects\" holds URL prefixes with a path ('https://cdn.example.com/'), not '\(HeaderText.printable(prefix))'")
                }
            }
            try r.finish()
            guard Place.names(url) else {
                throw TureenError.invalid("target blobs \"url\" must hold {hex} or {digest}, where each blob's name goes")
            }
            if case .raw(method: "PUT") = upload, !Place.names(uploadURL) {
                throw TureenError.invalid("target blobs \"uploadUrl\" must hold {hex} or {digest} to PUT each blob at its own URL")
            }
            let place = Place(url: url, uploadURL: uploadURL, upload: upload, check: check, redirects: redirects)
            let sample = BlobRef(digest: "sha256-" + String(repeating: "0", count: 64), length: 0, contentType: nil)
            try URLText.checkTargetURL(try place.url(place.url, sample))
            try URLText.checkTargetURL(try place.url(place.uploadURL, sample))
            return place
        }

        private static func names(_ template: String) -> Bool { template.contains("{hex}") || template.contains("{digest}") }

        /// `template` with the blob's name put in.
        func url(_ template: String, _ ref: BlobRef) throws -> String {
            let hex = String(try BlobRef.hex(ofDigest: ref.digest))
            return template.replacingAll("{hex}", with: hex).replacingAll("{digest}", with: ref.digest)
        }

        /// `template` with a sealed blob's server name put in.
        func url(_ template: String, sealedName hex: String) -> String {
            template.replacingAll("{hex}", with: hex).replacingAll("{digest}", with: "hmac-sha256-" + hex)
        }
    }

    private let store: Store
    private let place: Place
    private let targetOrigin: String
    private let own: RetryingSender
    private let anonymous: RetryingSender
    private let sealing: BlobSealing?
    private(set) var moved = 0
    private(set) var bytes: Int64 = 0
    var progress: ((BlobRef, String, Int64) -> Void)?

    /// `url`: the target's; its origin gets the credentials.
    init(store: Store, place: Place, url: String, senders: (own: RetryingSender, anonymous: RetryingSender), sealing: BlobSealing?) {
        self.store = store
        self.place = place
        self.sealing = sealing
        targetOrigin = URLText.origin(url)
        (own, anonymous) = senders
    }

    /// The sender for `url`: with the target's credentials only on its origin.
    private func sender(_ url: String) -> RetryingSender {
        URLText.origin(url) == targetOrigin ? own : anonymous
    }

    /// The blob's URLs from `template`, one per name it may have on the
    /// server (see KintoAttachments.names), with the key id of each.
    private func urls(_ template: String, _ ref: BlobRef) throws -> [(url: String, keyId: String?)] {
        guard let sealing else { return [(try place.url(template, ref), nil)] }
        return try sealing.names(ref).map { (place.url(template, sealedName: $0.hex), $0.keyId) }
    }

    func ensureOnServer(_ ref: BlobRef) throws {
        if place.check, try holds(ref) { return }
        try upload(ref)
    }

    func upload(_ ref: BlobRef) throws {
        let reader = try store.blobReader(ref.digest)
        guard let url = try urls(place.uploadURL, ref).first?.url else { return }
        let source: UploadBytes = try sealing.map { try SealedUpload(reader, keys: $0.keys) } ?? reader
        let contentType = sealing == nil ? KintoAttachments.safeContentType(ref.contentType) : BlobSealing.contentType
        var request: HTTPRequest
        let body: BlobUploadBody
        switch place.upload {
        case .raw(let method):
            request = HTTPRequest(method: method, url: url, headers: [("Content-Type", contentType)])
            body = BlobUploadBody(source, name: ref.digest)
        case .multipart(let field):
            let hex = try sealing?.names(ref).first?.hex ?? String(try BlobRef.hex(ofDigest: ref.digest))
            let fileName = hex + (sealing == nil ? KintoAttachments.fileExtension(ref.contentType) : ".bin")
            let (form, type) = BlobUploadBody.multipart(source, hex: hex, field: field, fileName: fileName, contentType: contentType)
            request = HTTPRequest(method: "POST", url: url, headers: [("Content-Type", type)])
            body = form
        }
        // Sealed bytes outnumber the blob's by their header and tags: progress counts the blob's.
        body.progress = BlobProgress { [weak self] in self?.progress?(ref, "up", min($0, ref.length)) }
        request.upload = body
        let r = try sender(url).send(request)
        guard r.isSuccess else {
            throw TureenError(.http, "\(request.method) \(Log.url(url)): uploading blob \(ref.digest) failed: \(r.summary)")
        }
        moved += 1
        bytes += ref.length
    }

    /// Whether the server says it holds the blob: a success to HEAD of its
    /// URL with the blob's length. A server that cannot answer HEAD (405,
    /// 501) is asked with a GET of the blob's first byte instead (see
    /// probe); any other answer means what it would to HEAD (see
    /// notHeld). A blob not stored here is asked about even with "check":
    /// false: it cannot be uploaded, so asking is the only way to send its
    /// record.
    ///
    /// A sealed blob is held when one of its names holds its sealed length
    /// under that name's key.
    func holds(_ ref: BlobRef) throws -> Bool {
        for (url, keyId) in try urls(place.url, ref) where try holds(ref, keyId: keyId, at: url) { return true }
        return false
    }

    func heldNames(_ ref: BlobRef) throws -> [Bool] {
        try urls(place.url, ref).map { try holds(ref, keyId: $0.keyId, at: $0.url) }
    }

    private func holds(_ ref: BlobRef, keyId: String?, at url: String) throws -> Bool {
        guard let keyId, let sealing else { return try holds(ref, length: ref.length, at: url) }
        // A length no blob has: no server holds it.
        guard let sealed = sealing.sealedLength(ref, keyId: keyId) else { return false }
        return try holds(ref, length: sealed, at: url)
    }

    /// A DELETE of the blob's URL under that name. An API that deletes no
    /// blobs (405, 501) keeps it: that is logged, and not an error, as
    /// every device listing the first key finds the blob under its name.
    func remove(_ ref: BlobRef, keyIndex: Int) throws {
        let all = try urls(place.url, ref)
        guard all.indices.contains(keyIndex) else { return }
        let url = all[keyIndex].url
        let r = try sender(url).send(HTTPRequest(method: "DELETE", url: url))
        if r.isSuccess || r.status == 404 || r.status == 410 { return }
        if r.status == 405 || r.status == 501 {
            Log.write(.info, .http, "DELETE \(Log.url(url)): the server deletes no blobs (\(r.status)); blob \(ref.digest) stays there under an older key's name")
            return
        }
        throw TureenError(.http, "DELETE \(Log.url(url)): removing blob \(ref.digest) under an older key's name failed: \(r.summary)")
    }

    private func holds(_ ref: BlobRef, length: Int64, at url: String) throws -> Bool {
        let r = try sender(url).send(HTTPRequest(method: "HEAD", url: url))
        if r.isSuccess { return r.header("content-length").flatMap { Int64($0) } == length }
        if r.status == 405 || r.status == 501 { return try probe(ref, length: length, url) }
        return try notHeld(r, asked: "HEAD", url, ref)
    }

    /// The one rule for an answer to "do you hold this blob?" that is not
    /// a success, whichever way it was asked: a server that lacks the blob
    /// (404, 410) or answers elsewhere (a redirect, not followed for a
    /// check) gets it uploaded (uploads are idempotent); any other answer
    /// (401, 403, a 5xx after its retries) fails the sync, since uploading
    /// to a server that refused us, or holding back a record whose blob it
    /// may hold, would hide the fault.
    private func notHeld(_ r: HTTPResponse, asked: String, _ url: String, _ ref: BlobRef) throws -> Bool {
        if [404, 410].contains(r.status) || (300..<400).contains(r.status) { return false }
        throw TureenError(.http, "\(asked) \(Log.url(url)): asking whether the server holds blob \(ref.digest) failed: \(r.summary)")
    }

    /// What HEAD would have said, asked with `Range: bytes=0-0`: the total
    /// that a 206's Content-Range gives (or a 416's, for an empty blob) is
    /// the length the server holds at the blob's URL, the same claim a
    /// HEAD's Content-Length makes. A server that ignores the Range is
    /// cut off after its first byte, and says nothing (false), as before:
    /// the probe never downloads the blob. An error is HEAD's (notHeld).
    private func probe(_ ref: BlobRef, length: Int64, _ url: String) throws -> Bool {
        let sink = FirstByte()
        var request = HTTPRequest(method: "GET", url: url, headers: [("Range", "bytes=0-0")])
        request.download = (sink, Int64.max)  // FirstByte itself ends a body past its first byte
        let r: HTTPResponse
        do {
            r = try sender(url).send(request)
        } catch let e as TureenError where e.code == .http && sink.overflowed {
            Log.write(.debug, .http, "GET \(Log.url(url)) with a Range of one byte: the whole blob came (\(e.message)); the server is taken not to hold it")
            return false
        }
        let total = r.header("content-range").flatMap { $0.split(separator: "/").last.flatMap { Int64($0) } }
        switch r.status {
        case 206, 416: return total == length
        case 200: return sink.count == length  // the whole blob, of one byte or none
        case 200..<300: return false  // a success without the blob's length, as HEAD's would be
        default: return try notHeld(r, asked: "GET with Range bytes=0-0", url, ref)
        }
    }

    /// Where a download may be redirected: the blob URL's origin, or under
    /// a prefix the target declared.
    private func redirectAllowed(_ url: String, from blobURL: String) -> Bool {
        URLText.isUnder(url, anyOf: [URLText.origin(blobURL) + "/"] + place.redirects)
    }

    /// A sealed blob is asked for under each of its names in turn, until
    /// the server has one.
    func download(_ ref: BlobRef) throws {
        let candidates = try urls(place.url, ref)
        for (n, (url, _)) in candidates.enumerated() {
            let senderFor = { (to: String) -> RetryingSender? in
                to == url || self.redirectAllowed(to, from: url) ? self.sender(to) : nil
            }
            do {
                try BlobDownload.fetch(ref, from: url, sender: senderFor, store: store, sealing: sealing) { [weak self] in
                    self?.progress?(ref, "down", $0)
                }
            } catch let e as TureenError where e.code == .notFound {
                guard let sealing else { throw e }
                if n + 1 < candidates.count { continue }
                throw sealing.notOnServer(ref)
            }
            moved += 1
            bytes += ref.length
            return
        }
    }
}

/// The body of a probe: the first byte of a blob, dropped. More ends the
/// transfer (a server that ignores the Range sends the whole blob).
private final class FirstByte: BodySink {
    private(set) var count: Int64 = 0
    private(set) var overflowed = false
    var kept: Int64 { 0 }
    func restart() throws { count = 0 }
    func write(_ bytes: UnsafeRawBufferPointer) throws {
        count += Int64(bytes.count)
        guard count <= 1 else {
            overflowed = true
            throw TureenError(.http, "the server sent more than the byte asked for")
        }
    }
}
