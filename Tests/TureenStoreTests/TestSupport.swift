@testable import TureenStore

extension String {
    /// Reads a result writer like bytes, so tests can decode either.
    init(decoding w: JSONWriter, as _: UTF8.Type) { self = w.string }
}
