import TureenStore
import TureenCore

/// A record's modification stamp as sync down reads it: epoch milliseconds
/// for ordering and, when the server wrote a date-time, the server's own
/// text, which is what goes back to it as the since parameter (a server
/// compares its own format; Tureen must not rewrite it).
struct Stamp {
    var ms: Int64
    var text: String?

    /// The largest stamp Tureen accepts from a server: the largest integer a
    /// double holds exactly (what JavaScript servers and Kinto can produce).
    /// Past it, before 1970, or not a stamp at all, a stamp is poison: one
    /// record could otherwise move maxTimeStamp beyond every later change.
    static let largest: Int64 = 9_007_199_254_740_991

    /// A record's stamp: an integer, or an RFC 3339 date-time with a zone;
    /// nil for anything else.
    static func read(_ value: JSON?) -> Stamp? {
        let stamp: Stamp
        switch value {
        case .int(let m)?: stamp = Stamp(ms: m)
        case .string(let s)?:
            guard let m = DateTimeText.epochMs(s) else { return nil }
            stamp = Stamp(ms: m, text: s)
        default: return nil
        }
        return stamp.ms >= 0 && stamp.ms <= largest ? stamp : nil
    }

    /// This stamp, or `ceiling` (an integer: a collection's timestamp) when
    /// that is lower.
    func capped(at ceiling: Int64?) -> Stamp {
        guard let c = ceiling, c < ms else { return self }
        return Stamp(ms: c)
    }
}
