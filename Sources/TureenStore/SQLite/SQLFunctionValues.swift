import TureenCore

/// Reading arguments and setting results in Tureen's SQL functions.
extension SQLiteAPI {
    /// An argument's text, borrowed from SQLite for the call; nil for NULL.
    func text(_ v: OpaquePointer?) -> UnsafeBufferPointer<UInt8>? {
        guard let p = value_text(v) else { return nil }
        return UnsafeBufferPointer(start: p, count: Int(value_bytes(v)))
    }

    /// Sets a text result (copied by SQLite), or an error when too large.
    func resultText(_ ctx: OpaquePointer?, _ s: String, from function: String) {
        var s = s
        s.withUTF8 { b in
            guard let n = Int32(exactly: b.count) else { return result_error(ctx, "\(function): value too large", -1) }
            let base = UnsafeRawPointer(b.baseAddress ?? Statement.emptyText.utf8Start)
            result_text(ctx, base.assumingMemoryBound(to: CChar.self), n, SQLiteAPI.transient)
        }
    }
}
