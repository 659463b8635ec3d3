import TureenCore

/// `tureen_changes` options: {"since": seq or "now", "soup": name, "limit": n}.
public struct ChangesRequest: Sendable {
    /// nil: "now", the newest position.
    public var since: Int64? = 0
    public var soup: String?
    public var limit: Int64 = ChangesRequest.defaultLimit

    public static let defaultLimit: Int64 = 1000
    public static let maxLimit: Int64 = 100_000

    public init() {}

    public static func parse(_ text: String?) throws -> ChangesRequest {
        var r = ChangesRequest()
        guard let text = text else { return r }
        guard case .object(let o) = try JSONParser.parse(text) else {
            throw TureenError.invalid("the changes options must be a JSON object")
        }
        for k in o.keys where !["since", "soup", "limit"].contains(k) {
            throw TureenError.invalid("unknown changes option '\(k)'; known: limit, since, soup")
        }
        if let v = o["since"], v != .null {
            if v.stringValue == "now" {
                r.since = nil
            } else {
                guard case .int(let n) = v, n >= 0 else {
                    throw TureenError.invalid("\"since\" must be a non-negative integer (a \"seq\" or \"lastSeq\" of this store) or \"now\"")
                }
                r.since = n
            }
        }
        if let v = o["soup"], v != .null {
            guard let s = v.stringValue else { throw TureenError.invalid("\"soup\" must be a soup name") }
            try SoupCatalog.validateName(s)
            r.soup = s
        }
        if let v = o["limit"], v != .null {
            guard case .int(let n) = v, n >= 1, n <= maxLimit else {
                throw TureenError.invalid("\"limit\" must be an integer from 1 to \(maxLimit)")
            }
            r.limit = n
        }
        return r
    }
}
