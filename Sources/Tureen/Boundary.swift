import Glibc
import TureenStore

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

/// Checks an out-parameter before any work is done, so a NULL one cannot
/// waste a write that the caller never learns about.
func outPointer<T>(_ p: UnsafeMutablePointer<T>?, _ name: String) throws -> UnsafeMutablePointer<T> {
    guard let p = p else { throw TureenError.misuse("\(name) is NULL") }
    return p
}

/// Copies a result into malloc'd memory that the host releases with tureen_free.
func allocatedCString(_ s: String) throws -> UnsafeMutablePointer<CChar> {
    guard let p = strdup(s) else { throw TureenError(.internal, "out of memory") }
    return p
}

/// Copies JSON bytes into a malloc'd, NUL-terminated string for the host.
func allocatedCString(bytes: [UInt8]) throws -> UnsafeMutablePointer<CChar> {
    guard let p = malloc(bytes.count + 1)?.assumingMemoryBound(to: CChar.self) else {
        throw TureenError(.internal, "out of memory for a \(bytes.count)-byte result")
    }
    bytes.withUnsafeBytes { b in
        if let base = b.baseAddress { memcpy(p, base, bytes.count) }
    }
    p[bytes.count] = 0
    return p
}

/// Stores a result in an out-parameter that was checked before the work.
func deliver(_ bytes: [UInt8], to out: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) throws {
    out.pointee = try allocatedCString(bytes: bytes)
}
