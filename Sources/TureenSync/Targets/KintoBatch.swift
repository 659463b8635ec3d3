import TureenStore
import TureenCore

/// Kinto's /batch: {"requests": [{"method", "path", "body", "headers"}]},
/// answered by {"responses": [{"status", "body", "headers"}]} in the same
/// order. A REST target's "batch" endpoint speaks it too.
struct KintoBatch: BatchFormat {
    let url: String

    func push(_ changes: [Change], over target: RestTarget) throws -> [PushOutcome] {
        var requests: [JSON] = []
        for r in changes.map(target.plan) {
            var o = JSONObject([("method", .string(r.method)), ("path", .string(URLText.pathAndQuery(r.url)))])
            if let b = r.body { o["body"] = b }
            if !r.headers.isEmpty { o["headers"] = .object(JSONObject(r.headers.map { ($0.0, JSON.string($0.1)) })) }
            requests.append(.object(o))
        }
        let body = JSON.object(JSONObject([("requests", .array(requests))]))
        var request = HTTPRequest(method: "POST", url: url, body: Array(body.text.utf8))
        request.resendable = false  // see ChangePusher.push
        let r = try target.send(request)
        let parts = try parts(r, count: changes.count)
        // Kinto aborts the batch's transaction at a part answered 409 and
        // goes on in a new one: the parts before it were rolled back, though
        // their answers still say 201 or 200 (Kinto 26 on PostgreSQL, under
        // concurrent writers). They are not confirmed.
        let rolledBack = parts.map { Int($0["status"]?.int64Value ?? 0) }.lastIndex(of: 409) ?? 0
        var outcomes: [PushOutcome] = []
        for (i, (c, part)) in zip(changes, parts).enumerated() {
            let status = Int(part["status"]?.int64Value ?? 0)
            if i < rolledBack && (200..<300).contains(status) {
                outcomes.append(try target.pushOne(c))  // sent again alone, with retries
                continue
            }
            // A failed part of a batch is sent again alone, with retries.
            outcomes.append(try outcome(c, part, target) ?? target.pushOne(c))
        }
        return outcomes
    }

    /// The parts of a batch answer, one for each of the `count` requests sent.
    func parts(_ r: HTTPResponse, count: Int) throws -> [JSON] {
        guard r.isSuccess else { throw TureenError(.http, "POST \(url): \(r.summary)") }
        guard let responses = (try? r.json())?["responses"]?.arrayValue, responses.count == count else {
            throw TureenError(.http, "POST \(url): the answer (HTTP \(r.status)) does not answer each request; the batch's changes stay local")
        }
        return responses
    }

    /// What one part of a batch answer means for its change; nil when the
    /// part failed in a way that sending the change again may mend.
    func outcome(_ c: Change, _ sub: JSON, _ target: RestTarget) throws -> PushOutcome? {
        let status = Int(sub["status"]?.int64Value ?? 0)
        if status == 401 || status == 403 {
            throw TureenError(.http, "\(c.id): HTTP \(status) (check the target's auth)")
        }
        let b = sub["body"] ?? .null
        if status >= 500 || status == 429 || status == 0 || (status == 409 && sub["headers"]?["Retry-After"] != nil) {
            return nil
        }
        let summary = "HTTP \(status)" + (b["message"]?.stringValue.map { ": \($0)" } ?? "")
        return target.outcome(c, status: status, body: b, summary: summary)
    }
}
