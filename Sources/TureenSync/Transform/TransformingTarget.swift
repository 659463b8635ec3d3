import TureenStore
import TureenCore

/// A target whose records pass through a TransformPipeline: changes are
/// encoded before they are sent; every server copy that comes back (feed
/// pages, push answers, conflict copies, lookups, cached reads) is decoded
/// before the sync sees it. A record a step fails on fails alone; a
/// network error a step keeps giving, or a cancel, ends the call as a
/// request's would.
final class TransformingTarget: SyncTarget, PageDecoding {
    let inner: SyncTarget
    let pipeline: TransformPipeline

    init(_ inner: SyncTarget, _ pipeline: TransformPipeline) {
        self.inner = inner
        self.pipeline = pipeline
    }

    var idField: String { inner.idField }
    var modifiedField: String { inner.modifiedField }
    var sortedByModification: Bool { inner.sortedByModification }
    var batchSize: Int { inner.batchSize }
    var requestCount: Int { inner.requestCount }
    var mayHaveArrivedCount: Int? { inner.mayHaveArrivedCount }
    /// A page fetched ahead would be decoded on the feed's thread.
    var fetchesOnAnyThread: Bool { inner.fetchesOnAnyThread && pipeline.anyThread }
    func abandon() { inner.abandon() }
    var comparesBase: Bool { inner.comparesBase }
    var sinceOverlapMs: Int64 { inner.sinceOverlapMs }
    func version(of base: JSONObject) -> String? { inner.version(of: base) }
    func isTombstone(_ record: JSONObject) -> Bool { inner.isTombstone(record) }
    func readServerLimits() throws { try inner.readServerLimits() }
    func pauseBeforeResend(attempt: Int) throws -> Bool { try inner.pauseBeforeResend(attempt: attempt) }

    var containers: TargetContainers? { inner.containers }
    var counting: FeedCounting? { inner.counting }
    var blobHosting: BlobHosting? { inner.blobHosting }
    var credentialRefresh: CredentialRefresh? { inner.credentialRefresh }
    /// Uploads in parallel would encode on their own threads.
    var parallelUploads: ParallelUploads? {
        guard pipeline.anyThread, let p = inner.parallelUploads else { return nil }
        return ParallelTransforms(p, pipeline)
    }
    var recordReads: RecordReads? { inner.recordReads.map { DecodedReads($0, pipeline) } }
    var pageDecoding: PageDecoding? { self }

    func fetch(since: FeedPosition?, next: JSON?) throws -> FetchPage {
        try decode(try fetchUndecoded(since: since, next: next))
    }

    func fetchUndecoded(since: FeedPosition?, next: JSON?) throws -> FetchPage {
        try inner.fetch(since: since, next: next)
    }

    func decode(_ page: FetchPage) throws -> FetchPage { try TransformingTarget.decoded(page, pipeline) }

    /// Encodes each change; those a step fails on are not sent, and get
    /// their failure as their outcome, in their place.
    func push(_ changes: [Change]) throws -> [PushOutcome] {
        var refused: [Int: TureenError] = [:]
        var encoded: [Change] = []
        for (i, c) in changes.enumerated() {
            do {
                encoded.append(try encode(c))
            } catch let f as TransformFailure {
                refused[i] = f.error
            }
        }
        var answers = try (encoded.isEmpty ? [] : inner.push(encoded)).makeIterator()
        return try changes.indices.map { i in
            if let e = refused[i] { return .rejected(e) }
            guard let a = answers.next() else {
                return .rejected(TureenError(.internal, "the target answered fewer changes than it was sent"))
            }
            return try decoded(a)
        }
    }

    /// A copy that does not decode throws TransformFailure: sync up fails
    /// that change alone (ChangePusher).
    func get(id: String) throws -> JSONObject? { try inner.get(id: id).map(pipeline.decode) }

    func lookUp(id: String) throws -> ServerRecord {
        switch try inner.lookUp(id: id) {
        case .live(let r):
            let d = try pipeline.decode(r)
            return inner.isTombstone(d) ? .deleted : .live(d)
        case let other: return other
        }
    }

    /// A change as the server is to receive it. A deletion's record is its
    /// tombstone, {"id", "deleted": true}, which steps see as kinto.js's
    /// do; what a deletion sends is its id alone. A partial update (a
    /// fieldlist) goes whole, its fields over the server copy it was made
    /// against: its encoded fields, merged by the server into an encoded
    /// record, would not decode to the record meant.
    private func encode(_ c: Change) throws -> Change {
        var out = c
        switch c.kind {
        case .create, .update:
            var record = c.record
            if c.partial, let base = c.base {
                record = base
                record[modifiedField] = nil
                for m in c.record.members { record[m.key] = m.value }
                out.partial = false
            }
            out.record = try pipeline.encode(record)
        case .delete:
            _ = try pipeline.encode(JSONObject([(idField, .string(c.id)), ("deleted", .bool(true))]))
        }
        return out
    }

    /// An answer with the server's copy decoded. A copy that does not
    /// decode fails the change: it is sent again by the next sync, whose
    /// precondition then finds the server's copy and reads it again.
    private func decoded(_ outcome: PushOutcome) throws -> PushOutcome {
        do {
            switch outcome {
            case .applied(let copy?): return .applied(try pipeline.decode(copy))
            case .conflict(let copy?, let known): return .conflict(try pipeline.decode(copy), known: known)
            default: return outcome
            }
        } catch let f as TransformFailure {
            return .rejected(f.error)
        }
    }

    /// `page` with its records decoded; one that does not decode stays as
    /// its id and stamp, with its failure (FetchPage.failures).
    /// The decoded records' text goes with them where the pipeline gives
    /// it (see FetchPage.texts).
    static func decoded(_ page: FetchPage, _ pipeline: TransformPipeline) throws -> FetchPage {
        var records: [JSONObject] = []
        records.reserveCapacity(page.records.count)
        var failures: [Int: TureenError] = [:]
        let text = JSONWriter(reserving: pipeline.givesText ? (page.texts?.body.count ?? 0) : 0)
        var spans: [Range<Int>?] = []
        spans.reserveCapacity(page.records.count)
        for (i, r) in page.records.enumerated() {
            do {
                let (record, span) = try pipeline.decode(r, textTo: text)
                records.append(record)
                spans.append(span)
            } catch let f as TransformFailure {
                failures[i] = f.error
                var stub = JSONObject()
                for f in [pipeline.idField, pipeline.modifiedField] { if let v = r[f] { stub[f] = v } }
                records.append(stub)
                spans.append(nil)
            }
        }
        let texts = pipeline.givesText && text.isComplete ? RecordTexts(body: text.bytes, spans: spans) : nil
        var out = FetchPage(records: records, next: page.next, total: page.total, texts: texts)
        out.snapshot = page.snapshot
        out.failures = failures
        return out
    }
}

/// Parallel uploads whose extra connections encode and decode too.
private final class ParallelTransforms: ParallelUploads {
    let inner: ParallelUploads
    let pipeline: TransformPipeline
    init(_ inner: ParallelUploads, _ pipeline: TransformPipeline) {
        self.inner = inner
        self.pipeline = pipeline
    }
    var uploadConnections: Int { inner.uploadConnections }
    func extraConnection() throws -> SyncTarget { TransformingTarget(try inner.extraConnection(), pipeline) }
}

/// A cached fetch's reads, decoded. A record that does not decode fails
/// the read: a cached answer is the server's records whole, or nothing.
private final class DecodedReads: RecordReads {
    let inner: RecordReads
    let pipeline: TransformPipeline
    init(_ inner: RecordReads, _ pipeline: TransformPipeline) {
        self.inner = inner
        self.pipeline = pipeline
    }
    func get(id: String) throws -> JSONObject? {
        do { return try inner.get(id: id).map(pipeline.decode) } catch let f as TransformFailure { throw f.error }
    }
    func fetch(since: FeedPosition?, next: JSON?) throws -> FetchPage {
        let page = try TransformingTarget.decoded(try inner.fetch(since: since, next: next), pipeline)
        if let first = page.failures.keys.min(), let e = page.failures[first] { throw e }
        return page
    }
    func isTombstone(_ record: JSONObject) -> Bool { inner.isTombstone(record) }
    func abandon() { inner.abandon() }
}
