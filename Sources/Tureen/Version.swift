import Glibc
import TureenCore

/// The library's version; the header's TUREEN_VERSION_NUMBER must equal
/// `versionNumber` (major * 10000 + minor * 100 + patch).
enum Version {
    static let text: StaticString = "0.1.0"
    static let number: Int32 = 100
}

@_cdecl("tureen_version")
public func tureen_version() -> UnsafePointer<CChar> {
    UnsafeRawPointer(Version.text.utf8Start).assumingMemoryBound(to: CChar.self)
}

@_cdecl("tureen_version_number")
public func tureen_version_number() -> Int32 { Version.number }

@_cdecl("tureen_errmsg")
public func tureen_errmsg() -> UnsafePointer<CChar> { ErrorState.current }

@_cdecl("tureen_free")
public func tureen_free(_ p: UnsafeMutableRawPointer?) { free(p) }
