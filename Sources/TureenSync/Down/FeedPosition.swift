import TureenStore
import TureenCore

/// Where a sync down's feed stands: a record stamp (the state's
/// maxTimeStamp: every target Tureen speaks today), or an opaque sequence
/// a changes feed hands out and takes back as it came (CouchDB's
/// `_changes` `since`). Targets take either; only stamps are kept in a
/// sync's state so far, so a sequence feed also needs a place there.
enum FeedPosition {
    case stamp(Stamp)
    case sequence(String)

    /// The stamp of a feed read by record stamp; a sequence cannot be one.
    static func stamp(of position: FeedPosition?) throws -> Stamp? {
        switch position {
        case nil: return nil
        case .stamp(let s)?: return s
        case .sequence?: throw TureenError(.internal, "this target reads its feed by record stamp, not by sequence")
        }
    }
}
