import TureenStore
import TureenCore

/// The header's names of the status codes, without the prefix, as static C
/// strings: a binding takes them from here instead of copying the numbers.
enum StatusName {
    static func of(_ status: Int32) -> StaticString? {
        if status == 0 { return "OK" }
        guard let code = TureenCode(rawValue: status) else { return nil }
        switch code {
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

@_cdecl("tureen_status_name")
public func tureen_status_name(_ status: Int32, _ name: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Int32 {
    boundary {
        guard let name else { throw TureenError.misuse("name is NULL") }
        name.pointee = nil
        guard let s = StatusName.of(status) else {
            throw TureenError.invalid("\(status) is not a Tureen status code (0, 1-13 or 99)")
        }
        name.pointee = UnsafeRawPointer(s.utf8Start).assumingMemoryBound(to: CChar.self)
    }
}
