import TureenStore

/// One blob's download, written into the store as it arrives and kept only
/// when its bytes hash to the digest asked for.
enum BlobDownload {
    /// GETs `url` through `sender` into the store. At most `ref.length`
    /// bytes are taken; fewer, more or other bytes store nothing.
    static func fetch(_ ref: BlobRef, from url: String, sender: RetryingSender, store: Store,
                      progress: ((Int64) -> Void)? = nil) throws {
        let sink = BlobSink(store: store, contentType: ref.contentType, progress: BlobProgress(progress))
        var request = HTTPRequest(method: "GET", url: url)
        request.download = (sink, ref.length)
        let r: HTTPResponse
        do {
            r = try sender.send(request)
        } catch {
            sink.abandon()
            throw error
        }
        guard r.isSuccess else {
            sink.abandon()
            if r.status == 404 || r.status == 410 {
                throw TureenError(.notFound, "GET \(Log.url(url)): the server has no blob \(ref.digest) (a record refers to it)")
            }
            throw TureenError(.http, "GET \(Log.url(url)): fetching blob \(ref.digest) failed: \(r.summary)")
        }
        _ = try sink.finish(expecting: ref.digest)
    }
}

/// A download's bytes, staged in the store as they arrive.
private final class BlobSink: BodySink {
    private let store: Store
    private let contentType: String
    private var writer: BlobWriter?
    private var progress: BlobProgress

    init(store: Store, contentType: String, progress: BlobProgress) {
        self.store = store
        self.contentType = contentType
        self.progress = progress
    }

    /// A download that broke off goes on from the bytes staged so far.
    var kept: Int64 { writer?.written ?? 0 }

    func restart() throws {
        try writer?.cancel()
        writer = try store.blobWriter(contentType: contentType)
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard let w = writer else { throw TureenError(.internal, "a blob download wrote before it started") }
        try w.write(bytes)
        progress.moved(w.written)
    }

    /// Drops what was staged (best effort: collection removes a staging
    /// blob left behind once its grace period has passed).
    func abandon() {
        try? writer?.cancel()
        writer = nil
    }

    func finish(expecting digest: String) throws -> BlobRef {
        guard let w = writer else { throw TureenError(.internal, "a blob download finished before it started") }
        writer = nil
        return try w.finish(expecting: digest)
    }
}
