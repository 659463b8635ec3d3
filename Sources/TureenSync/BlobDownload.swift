import TureenStore

/// One blob's download, written into the store as it arrives and kept only
/// when its bytes hash to the digest asked for.
enum BlobDownload {
    /// Redirects followed for one blob, at most.
    static let maxRedirects = 5

    /// GETs `url` into the store, following redirects (301, 302, 303, 307,
    /// 308) to where `sender` gives a sender for: it picks the credentials
    /// for a URL, or returns nil where the blob may not be fetched from, so
    /// a server cannot send the device anywhere it likes. At most
    /// `ref.length` bytes are taken; fewer, more or other bytes store nothing.
    /// A download that an earlier one of the same blob left staged (killed,
    /// or failed after committing pieces) asks only for the rest; one that
    /// fails here leaves its committed pieces for the next, unless the
    /// server says it has no such blob.
    static func fetch(_ ref: BlobRef, from first: String, sender: (String) -> RetryingSender?, store: Store,
                      progress: ((Int64) -> Void)? = nil) throws {
        let sink = try BlobSink(store: store, ref: ref, progress: BlobProgress(progress))
        var url = first
        var r: HTTPResponse
        var redirects = 0
        do {
            while true {
                guard let s = sender(url) else {
                    throw TureenError(.http, "GET \(Log.url(first)): the server redirects blob \(ref.digest) to '\(HeaderText.printable(String(Log.url(url).prefix(200))))', where the target does not allow fetching it; it was not fetched")
                }
                var request = HTTPRequest(method: "GET", url: url)
                request.download = (sink, ref.length)
                r = try s.send(request)
                guard [301, 302, 303, 307, 308].contains(r.status), let location = r.header("location") else { break }
                redirects += 1
                guard redirects <= maxRedirects else {
                    throw TureenError(.http, "GET \(Log.url(first)): blob \(ref.digest) was redirected more than \(maxRedirects) times; it was not fetched")
                }
                url = try resolve(location, against: url)
            }
        } catch {
            sink.abandon(keeping: true)
            throw error
        }
        // Every byte came before an attempt broke off: asked for the rest,
        // the server says there is none.
        let complete = r.status == 416 && sink.kept == ref.length
        guard r.isSuccess || complete else {
            let missing = r.status == 404 || r.status == 410
            sink.abandon(keeping: !missing)
            if missing {
                throw TureenError(.notFound, "GET \(Log.url(url)): the server has no blob \(ref.digest) (a record refers to it)")
            }
            throw TureenError(.http, "GET \(Log.url(url)): fetching blob \(ref.digest) failed: \(r.summary)")
        }
        _ = try sink.finish(expecting: ref.digest)
    }

    /// A Location header as an absolute URL: absolute, or a path on the
    /// origin of the URL that answered.
    private static func resolve(_ location: String, against url: String) throws -> String {
        let absolute = location.hasPrefix("/") && !location.hasPrefix("//") ? URLText.origin(url) + location : location
        do {
            try URLText.checkTargetURL(absolute)
        } catch {
            throw TureenError(.http, "a blob download was redirected to '\(HeaderText.printable(String(Log.url(location).prefix(200))))', which is not an http(s) URL Tureen follows (absolute, or a path from /)")
        }
        return absolute
    }
}

/// A download's bytes, staged in the store as they arrive.
private final class BlobSink: BodySink {
    private let store: Store
    private let ref: BlobRef
    private var writer: BlobWriter?
    private var progress: BlobProgress

    /// Takes over what an earlier download of `ref` left staged, if any.
    init(store: Store, ref: BlobRef, progress: BlobProgress) throws {
        self.store = store
        self.ref = ref
        self.progress = progress
        writer = try store.downloadWriter(for: ref)
    }

    /// A download that broke off goes on from the bytes staged so far.
    var kept: Int64 { writer?.written ?? 0 }

    func restart() throws {
        try writer?.cancel()
        writer = try store.downloadWriter(for: ref, resuming: false)
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard let w = writer else { throw TureenError(.internal, "a blob download wrote before it started") }
        try w.write(bytes)
        progress.moved(w.written)
    }

    /// Keeps what was committed for the next download of the blob, or
    /// drops it (best effort either way: collection removes a staging blob
    /// left behind once its grace period has passed).
    func abandon(keeping: Bool) {
        try? keeping ? writer?.suspend() : writer?.cancel()
        writer = nil
    }

    func finish(expecting digest: String) throws -> BlobRef {
        guard let w = writer else { throw TureenError(.internal, "a blob download finished before it started") }
        writer = nil
        return try w.finish(expecting: digest)
    }
}
