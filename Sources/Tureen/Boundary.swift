import Glibc
import TureenStore
import TureenCore

/// Runs an entry point's body: every error becomes a status code and a
/// thread-local message, so nothing thrown in Swift reaches the host.
@inline(__always)
func boundary(_ body: () throws -> Void) -> Int32 {
    do {
        try body()
        ErrorState.clear()
        return 0
    } catch let e as TureenError {
        ErrorState.set(e.message)
        return e.code.rawValue
    } catch {
        ErrorState.set("internal error: \(error)")
        return TureenCode.internal.rawValue
    }
}

/// A borrowed input string: NULL is MISUSE, bytes that are not UTF-8 are INVALID.
func inputString(_ p: UnsafePointer<CChar>?, _ name: String) throws -> String {
    guard let p = p else { throw TureenError.misuse("\(name) is NULL") }
    guard let s = String(validatingCString: p) else { throw TureenError.invalid("\(name) is not valid UTF-8") }
    return s
}

/// A required input string as the caller's bytes, not copied: for JSON the
/// parser checks as UTF-8 itself, where a copy into a String would cost a
/// pass and a copy of every byte. Valid while the call runs.
func inputBytes(_ p: UnsafePointer<CChar>?, _ name: String) throws -> UnsafeBufferPointer<UInt8> {
    guard let p = p else { throw TureenError.misuse("\(name) is NULL") }
    return UnsafeBufferPointer(start: UnsafeRawPointer(p).assumingMemoryBound(to: UInt8.self), count: strlen(p))
}

/// An optional input string: NULL is nil; otherwise as inputString.
func inputString(optional p: UnsafePointer<CChar>?, _ name: String) throws -> String? {
    try p.map { try inputString($0, name) }
}

/// Checks an out-parameter before any work is done, so a NULL one cannot
/// waste a write that the caller never learns about.
func outPointer<T>(_ p: UnsafeMutablePointer<T>?, _ name: String) throws -> UnsafeMutablePointer<T> {
    guard let p = p else { throw TureenError.misuse("\(name) is NULL") }
    return p
}

/// Hands a written result to the host without copying it.
func deliver(_ writer: JSONWriter, to out: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) throws {
    out.pointee = try writer.takeCString()
}

/// Hands a text made as a String to the host, in memory tureen_free releases.
func deliver(_ text: String, to out: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) throws {
    let w = JSONWriter(reserving: text.utf8.count + 1)
    var t = text
    t.withUTF8 { w.appendRaw(bytes: $0) }
    try deliver(w, to: out)
}
