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
    ///
    /// With `sealing`, the bytes are a sealed blob (BlobStream), opened as
    /// they arrive with any of the keys: at most its sealed size under the
    /// longest key id is taken, and a blob that does not open whole, or
    /// opens to other bytes than the reference's, is TUREEN_E_CORRUPT and
    /// stores nothing. A sealed download resumes within a run but never
    /// takes over what another left: the opener's state is not kept.
    static func fetch(_ ref: BlobRef, from first: String, sender: (String) -> RetryingSender?, store: Store,
                      sealing: BlobSealing? = nil, progress: ((Int64) -> Void)? = nil) throws {
        if let sealing {
            let opener = BlobSink.Opening(keys: sealing.keys, limit: try sealing.downloadLimit(ref))
            return try fetch(ref, from: first, sender: sender,
                             into: BlobSink(store: store, ref: ref, progress: BlobProgress(progress), takingOver: false, opening: opener))
        }
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
                request.download = (sink, sink.limit)
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
            sink.abandon(keeping: (code == .network || code == .cancelled) && sink.opening == nil)
            throw error
        }
        // Every byte came before an attempt broke off: asked for the rest,
        // the server says there is none.
        let complete = r.status == 416 && sink.kept > 0 && (sink.opening != nil || sink.kept == ref.length)
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

/// A download's bytes, staged in the store as they arrive (opened first,
/// when they are sealed).
private final class BlobSink: BodySink {
    /// A sealed download: the keys that open it, and the most it may take.
    struct Opening {
        let keys: EnvelopeKeys
        let limit: Int64
    }

    private let store: Store
    private let ref: BlobRef
    private var writer: BlobWriter?
    private var progress: BlobProgress
    let opening: Opening?
    private var opener: BlobOpener?
    /// Sealed bytes received, all of them opened or pending in `opener`.
    private var received: Int64 = 0

    /// Whether the bytes held began with those an earlier download left
    /// staged (a server that answers a Range with the whole body restarts).
    private(set) var tookOver: Bool
    /// Whether the bytes, all there, did not hash to the digest.
    private(set) var mismatched = false

    /// `takingOver`: goes on from what an earlier download of `ref` left
    /// staged, if anything.
    init(store: Store, ref: BlobRef, progress: BlobProgress, takingOver: Bool, opening: Opening? = nil) throws {
        self.store = store
        self.ref = ref
        self.progress = progress
        self.opening = opening
        opener = opening.map { BlobOpener(keys: $0.keys) }
        let w = try store.downloadWriter(for: ref, resuming: takingOver && opening == nil)
        writer = w
        tookOver = w.written > 0
    }

    /// The most bytes the request takes. A sealed download gets more than
    /// it may hold (libcurl's pieces are at most 16 KiB: any piece that
    /// crosses its limit reaches the sink), so that the sink sees a blob
    /// too large and refuses it as the server's fault (TUREEN_E_CORRUPT),
    /// not a transfer's.
    var limit: Int64 {
        guard let opening else { return ref.length }
        let (slack, overflow) = opening.limit.addingReportingOverflow(1 << 20)
        return overflow ? Int64.max : slack
    }

    /// A download that broke off goes on from the bytes staged so far (the
    /// sealed bytes received: the opener holds what it has not opened yet).
    var kept: Int64 { opening == nil ? writer?.written ?? 0 : received }

    func restart() throws {
        try writer?.cancel()
        writer = try store.downloadWriter(for: ref, resuming: false)
        opener = opening.map { BlobOpener(keys: $0.keys) }
        received = 0
        tookOver = false
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard let w = writer else { throw TureenError(.internal, "a blob download wrote before it started") }
        if let opening {
            received += Int64(bytes.count)
            guard received <= opening.limit else {
                throw ServedBlobFault(.corrupt, "blob \(ref.digest) came with more bytes than it holds sealed (\(opening.limit) at most for its length); it was not kept")
            }
            let plain = try opened { try $0.update(bytes) }
            try plain.withUnsafeBytes { try w.write($0) }
        } else {
            try w.write(bytes)
        }
        progress.moved(w.written)
        try Fault.point("blob.download.piece", failing: .network)
    }

    /// A step of the opener, its failures named for the blob.
    private func opened<T>(_ step: (inout BlobOpener) throws -> T) throws -> T {
        guard var o = opener else { throw TureenError(.internal, "a sealed blob download has no opener") }
        // Taken out while it works: a second reference would make Swift
        // copy its buffered bytes on every write.
        opener = nil
        defer { opener = o }
        do {
            return try step(&o)
        } catch let e as TureenError where e.code == .corrupt || e.code == .key {
            throw ServedBlobFault(e.code, "blob \(ref.digest): \(e.message); it was not kept")
        }
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
        if opener != nil {
            do {
                let (last, digest) = try opened { try $0.finish() }
                try last.withUnsafeBytes { try w.write($0) }
                // Checked here, as TUREEN_E_CORRUPT: a blob sealed under
                // the target's key that is not the one the record names
                // (another blob's ciphertext swapped in) is the server's
                // doing, not the network's.
                guard BlobRef.digest(of: digest) == ref.digest, w.written == ref.length else {
                    throw ServedBlobFault(.corrupt, "blob \(ref.digest) opened to other bytes than the record refers to (another blob's, swapped in on the server); it was not kept")
                }
            } catch {
                try? w.cancel()
                throw error
            }
        }
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
