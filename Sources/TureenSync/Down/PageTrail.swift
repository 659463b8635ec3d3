import TureenStore
import TureenCore

/// The page positions one run went on from. A server whose next-page link
/// or cursor names a page the run already read would keep it asking for
/// that page forever, counting its records again each time; the run stops
/// at the first repeat instead.
struct PageTrail {
    /// What the error names as stopped: "sync", "cached fetch".
    private let run: String
    private var followed = Set<ExactString>()  // by bytes: two links that differ in them are two pages

    init(of run: String = "sync") { self.run = run }

    /// Notes that the run goes on from `next` (nil: the last page); throws
    /// when it already went on from there.
    mutating func follow(_ next: JSON?) throws {
        guard let n = next, !followed.insert(ExactString(n.text)).inserted else { return }
        // The link is not shown: it may carry a token in its query.
        throw TureenError(.http, "the server's next page is one this \(run) already read (its link or cursor repeats); the \(run) stopped rather than read it again")
    }
}
