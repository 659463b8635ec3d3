import Glibc
@testable import TureenStore
@testable import TureenCore

extension String {
    /// Reads a result writer like bytes, so tests can decode either.
    init(decoding w: JSONWriter, as _: UTF8.Type) { self = w.string }
}

/// A new directory under /tmp for one test's stores.
func makeTestDirectory() -> String {
    var template = Array("/tmp/tureen-swift-XXXXXX".utf8CString)
    return String(cString: mkdtemp(&template))
}

func removeTestDirectory(_ dir: String) { _ = system("rm -rf '\(dir)'") }
