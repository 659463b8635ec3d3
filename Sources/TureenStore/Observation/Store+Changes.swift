import TureenCore

/// The change feed, read (`ChangeFeed` writes it with each commit).
extension Store {
    /// `tureen_changes`' answer, read in one snapshot.
    public func changes(_ request: ChangesRequest) throws -> JSONWriter {
        try withReader { c in try c.snapshot { try ChangeFeed.read(c, request) } }
    }

    /// The newest position of the feed; nil when it cannot be read now.
    func newestChangeSeq() -> Int64? {
        try? withReader { c in try c.snapshot { try ChangeFeed.newestSeq(c) } }
    }

    /// Other processes' changes after `after` (see ChangeFeed.othersChanges);
    /// nil when the feed cannot be read now.
    func othersChanges(after: Int64) -> (changes: [SoupChange]?, newest: Int64)? {
        try? withReader { c in try c.snapshot { try ChangeFeed.othersChanges(c, after: after) } }
    }
}
