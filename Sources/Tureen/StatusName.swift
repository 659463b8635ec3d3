import TureenStore
import TureenCore

/// The header's names of the status codes, without the prefix, as static C
/// strings: a binding takes them from here instead of copying the numbers.
enum StatusName {
    static func of(_ status: Int32) -> StaticString? {
        status == 0 ? "OK" : TureenCode(rawValue: status)?.name
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
