import TureenStore
import TureenCore

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
    /// or failed after committing pieces) asks only for the rest. One that
    /// fails here leaves its committed pieces for the next only when the
    /// connection failed (or the sync was cancelled): after any answer the
    /// server gave, such as a 206 from the wrong place, a later run would
    /// ask the same way and fail the same way, so it starts afresh.
    /// Staged bytes that, with the rest, do not hash to the digest (another
    /// server's, or damaged) are dropped and the blob fetched once more
    /// from its first byte: the server asked now may not be the one at fault.
    static func fetch(_ ref: BlobRef, from first: String, sender: (String) -> RetryingSender?, store: Store,
                      progress: ((Int64) -> Void)? = nil) throws {
        let sink = try BlobSink(store: store, ref: ref, progress: BlobProgress(progress), takingOver: true)
        do {
            try fetch(ref, from: first, sender: sender, into: sink)
        } catch let e as TureenError where e.code == .http && sink.tookOver && sink.mismatched {
            try fetch(ref, from: first, sender: sender,
                      into: BlobSink(store: store, ref: ref, progress: BlobProgress(progress), takingOver: false))
        }
    }

    private static func fetch(_ ref: BlobRef, from first: String, sender: (String) -> RetryingSender?, into sink: BlobSink) throws {
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
            let code = (error as? TureenError)?.code
            sink.abandon(keeping: code == .network || code == .cancelled)
            throw error
        }
        // Every byte came before an attempt broke off: asked for the rest,
        // the server says there is none.
        let complete = r.status == 416 && sink.kept == ref.length
        guard r.isSuccess || complete else {
            sink.abandon(keeping: false)
            if r.status == 404 || r.status == 410 {
                throw TureenError(.notFound, "GET \(Log.url(url)): the server has no blob \(ref.digest) (a record refers to it)")
            }
            throw TureenError(.http, "GET \(Log.url(url)): fetching blob \(ref.digest) failed: \(r.summary)")
        }
        _ = try sink.finish()
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

    /// Whether the bytes held began with those an earlier download left
    /// staged (a server that answers a Range with the whole body restarts).
    private(set) var tookOver: Bool
    /// Whether the bytes, all there, did not hash to the digest.
    private(set) var mismatched = false

    /// `takingOver`: goes on from what an earlier download of `ref` left
    /// staged, if anything.
    init(store: Store, ref: BlobRef, progress: BlobProgress, takingOver: Bool) throws {
        self.store = store
        self.ref = ref
        self.progress = progress
        let w = try store.downloadWriter(for: ref, resuming: takingOver)
        writer = w
        tookOver = w.written > 0
    }

    /// A download that broke off goes on from the bytes staged so far.
    var kept: Int64 { writer?.written ?? 0 }

    func restart() throws {
        try writer?.cancel()
        writer = try store.downloadWriter(for: ref, resuming: false)
        tookOver = false
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard let w = writer else { throw TureenError(.internal, "a blob download wrote before it started") }
        try w.write(bytes)
        progress.moved(w.written)
        try Fault.point("blob.download.piece", failing: .network)
    }

    /// Keeps what was committed for the next download of the blob, or
    /// drops it (best effort either way: collection removes a staging blob
    /// left behind once its grace period has passed).
    func abandon(keeping: Bool) {
        try? keeping ? writer?.suspend() : writer?.cancel()
        writer = nil
    }

    /// Names the blob; fails, keeping nothing, unless its bytes are as
    /// many as the reference says and hash to its digest.
    func finish() throws -> BlobRef {
        guard let w = writer else { throw TureenError(.internal, "a blob download finished before it started") }
        writer = nil
        guard w.written == ref.length else {
            try? w.cancel()
            throw TureenError(.http, "blob \(ref.digest) came with \(w.written) bytes where the record refers to \(ref.length); it was not kept")
        }
        do {
            return try w.finish(expecting: ref.digest)
        } catch let e as TureenError where e.code == .http {
            mismatched = true
            throw e
        }
    }
}
