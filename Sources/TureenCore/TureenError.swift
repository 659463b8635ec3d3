/// The status codes of the C ABI (values fixed by ARCHITECTURE.md), shared by
/// every layer so that an error keeps its meaning from SQLite up to the host.
public enum TureenCode: Int32, Sendable {
    case misuse = 1
    case invalid = 2
    case notFound = 3
    case key = 4
    case corrupt = 5
    case io = 6
    case busy = 7
    case constraint = 8
    case query = 9
    case network = 10
    case http = 11
    case conflict = 12
    case cancelled = 13
    case `internal` = 99

    /// The header's name of the code without its prefix ("CORRUPT" for
    /// TUREEN_E_CORRUPT), as tureen_status_name gives it and a sync
    /// state's recordErrors say it.
    public var name: StaticString {
        switch self {
        case .misuse: return "MISUSE"
        case .invalid: return "INVALID"
        case .notFound: return "NOT_FOUND"
        case .key: return "KEY"
        case .corrupt: return "CORRUPT"
        case .io: return "IO"
        case .busy: return "BUSY"
        case .constraint: return "CONSTRAINT"
        case .query: return "QUERY"
        case .network: return "NETWORK"
        case .http: return "HTTP"
        case .conflict: return "CONFLICT"
        case .cancelled: return "CANCELLED"
        case .internal: return "INTERNAL"
        }
    }
}

/// An error with a status code and a message written for the person who reads
/// `tureen_errmsg`: it says what failed and, where known, which input caused it.
public struct TureenError: Error, CustomStringConvertible, Sendable {
    public let code: TureenCode
    public let message: String
    /// When a server asked for a pause longer than the caller allows: the
    /// epoch ms before which it asked not to be contacted again.
    public var retryAt: Int64?
    /// The HTTP status a server refused one record's change with, so the
    /// app can act on it (kept in the record's __last_error_status__).
    public var httpStatus: Int?
    /// A write whose request failed after it may have reached the server
    /// (the connection broke once made, or a 500, 502 or 504 came back):
    /// it may have been applied, so it was not sent again as it was
    /// (RetryingSender); sync up sends its changes again under preconditions.
    public var mayHaveApplied = false

    public init(_ code: TureenCode, _ message: String, retryAt: Int64? = nil, httpStatus: Int? = nil) {
        self.code = code
        self.message = message
        self.retryAt = retryAt
        self.httpStatus = httpStatus
    }

    public var description: String { message }

    public static func invalid(_ message: String) -> TureenError { TureenError(.invalid, message) }
    public static func misuse(_ message: String) -> TureenError { TureenError(.misuse, message) }
}
