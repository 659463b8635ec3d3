import TureenCore

/// Where each record of a page lies in the response it came in, so that a
/// record can be stored as it came instead of written out again. A record
/// whose text says more than its members has none: one in which an object
/// repeated a name, which its tree keeps once.
struct RecordTexts {
    let body: [UInt8]
    /// Per record, in the page's order: its bytes in `body`, or nil.
    var spans: [Range<Int>?]

    /// `body` on record `i`'s text; nil when it has none.
    func withText<T>(_ i: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T? {
        guard let r = spans[i] else { return nil }
        return try self.body.withUnsafeBufferPointer { try body(UnsafeBufferPointer(rebasing: $0[r])) }
    }
}
