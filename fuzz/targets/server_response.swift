@testable import TureenCore
@testable import TureenStore
@testable import TureenSync

// What a server answers, fed to the parsers sync reads it with: a page of
// the feed (records, next-page link or cursor, totals, snapshot stamp), a
// record, a batch answer, a single change's answer and a conflict's body,
// under three targets (the Kinto preset and two REST shapes).
//
// Input: byte 0 picks the target and the changes' kinds; the rest is an
// HTTP answer as text: a status line ("409"), header lines, an empty line,
// then the body. Without an empty line it is all body, status 200.

private let cancel = CancelFlag()

private let targets: [RestTarget] = [
    #"{"type":"kinto","url":"http://127.0.0.1:8888/v1","bucket":"b","collection":"c"}"#,
    #"{"type":"rest","url":"http://127.0.0.1:9/api/items","idField":"Id","modifiedField":"LastModifiedDate","recordsPath":"result.items","recordPath":"result","nextPage":{"cursorPath":"result.cursor","cursorParam":"after"},"since":{"param":"since","exclusive":false},"tombstone":{"field":"status","value":"gone"},"create":"POST","concurrency":{"versionField":"version"},"conflictRecordPath":"error.current","totalHeader":"X-Total","snapshotHeader":"X-Snapshot","batch":{"url":"http://127.0.0.1:9/api/batch","max":10}}"#,
    #"{"type":"rest","url":"http://127.0.0.1:9/things?x=1","nextPage":{"urlPath":"links.next"},"concurrency":{"ifMatch":"W/\"{}\""},"update":"PATCH","partialUpdate":"PATCH","sortedByModification":true}"#,
].map {
    do { return try RestTarget(try RestConfig.parse(try JSONParser.parse($0)), cancel: cancel) } catch { fatalError("\(error)") }
}

/// An HTTP answer read from the input, its headers through the same line
/// parser libcurl's header callback uses.
private func response(_ bytes: UnsafeBufferPointer<UInt8>) -> HTTPResponse {
    var split: Int?
    if bytes.count >= 2 {
        for i in 0..<(bytes.count - 1) where bytes[i] == 0x0A && bytes[i + 1] == 0x0A { split = i; break }
    }
    guard let s = split else { return HTTPResponse(status: 200, headers: [], body: Array(bytes)) }
    let head = String(decoding: UnsafeBufferPointer(rebasing: bytes[..<s]), as: UTF8.self)
    var lines = head.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    let status = Int(lines.removeFirst()[...].trimmingCharacters(in: " \r")) ?? 200
    var headers: [(String, String)] = []
    for line in lines {
        if line.hasPrefix("HTTP/") { headers.removeAll(); continue }
        if let f = HTTPResponse.field(line + "\r\n") { headers.append(f) }
    }
    return HTTPResponse(status: status, headers: headers, body: Array(bytes[(s + 2)...]))
}

/// What sync does with a record it received: stamp, id, tombstone, the
/// local entry it becomes, the version it is sent back with.
private func use(_ record: JSONObject, _ t: RestTarget, snapshot: Int64?) {
    if let m = Stamp.read(record[t.modifiedField]) {
        require(m.ms >= 0 && m.ms <= Stamp.largest, "a stamp out of range was accepted")
        _ = m.capped(at: snapshot)
    }
    _ = record[t.idField].flatMap(SoupTransaction.keyText)
    _ = t.isTombstone(record)
    let entry = LocalFlags.entry(from: record, entryId: 7)
    if !record.keys.contains(where: LocalFlags.isLocalOnly) {
        require(LocalFlags.holds(entry, exactly: record), "a received record's entry does not hold it")
    }
    _ = t.version(of: record)
}

/// A conflict's copies as the app sees them.
private func conflict(_ outcome: PushOutcome, _ c: Change, _ t: RestTarget) {
    guard case .conflict(let theirs?, _) = outcome else { return }
    use(theirs, t, snapshot: nil)
    _ = Conflict.merged(base: c.base, theirs: theirs, yours: c.record, ignoring: t.modifiedField)
    _ = Conflict(entryId: 1, recordId: c.id, syncId: 1, base: c.base, theirs: theirs, yours: c.record).json(ignoring: t.modifiedField)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let t = targets[Int(data[0]) % targets.count]
    let kinds: [Change.Kind] = [.create, .update, .delete]
    let r = response(UnsafeBufferPointer(start: data + 1, count: size - 1))
    _ = r.summary
    _ = RetryingSender.isTransient(r)
    _ = r.header("backoff").flatMap { Int($0) }
    _ = r.header("retry-after").flatMap { Int($0) }
    _ = (try? r.json())?.at("settings.batch_max_requests")?.int64Value

    // A page of the feed.
    do {
        let page = try t.page(from: r, url: t.config.url)
        for record in page.records { use(record, t, snapshot: page.snapshot) }
        if let next = page.next {
            if case .string(let u) = next { _ = URLText.staysOn(t.config.url, u) }
            _ = t.listURL(since: Stamp(ms: 1), cursor: next)
        }
    } catch { refused(error) }

    // One record.
    do {
        if let record = try t.record(from: r, url: t.config.url) { use(record, t, snapshot: nil) }
    } catch { refused(error) }

    // The answer to one change, and to a batch of them.
    let base = JSONObject([(t.idField, .string("r1")), (t.modifiedField, .int(10)), ("v", .int(1))])
    var record = base
    record["v"] = .int(2)
    let changes = (0..<12).map { i in
        Change(kind: kinds[(Int(data[0] >> 2) + i) % 3], id: i == 0 ? "r1" : "r\(i)", record: record, partial: i % 2 == 1,
               ifMatch: "10", base: base)
    }
    let body = try? r.json()
    for c in changes.prefix(3) { conflict(t.outcome(c, status: r.status, body: body, summary: r.summary), c, t) }
    let parts = body?["responses"]?.arrayValue?.count ?? 2
    do {
        let batch = KintoBatch(url: t.config.batchURL ?? t.config.url)
        let answers = try batch.parts(r, count: parts)
        require(answers.count == parts, "a batch answer has another count than its requests")
        for (c, part) in zip(changes.cycled(parts), answers) {
            if let o = try batch.outcome(c, part, t) { conflict(o, c, t) }
        }
    } catch { refused(error) }
    return 0
}

private extension Array {
    /// `n` elements, starting again from the first when the array runs out.
    func cycled(_ n: Int) -> [Element] { (0..<n).map { self[$0 % count] } }
}
