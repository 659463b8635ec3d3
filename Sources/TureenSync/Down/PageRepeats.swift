import TureenStore
import TureenCore

/// Records a page lists more than once. Kinto never does, but a server that
/// does would otherwise have its last copy stored whatever its stamp: an
/// older copy after a newer one would undo the newer in the soup, while the
/// run's position moved past both, so no later run would bring it back.
enum PageRepeats {
    /// The positions of the copies to pass over: of each id listed more than
    /// once, all but the copy with the latest stamp (the last of equals,
    /// which is what a server sending its changes in order means). Records
    /// without an id or a stamp are not counted: they fail on their own.
    static func outdated(_ records: [JSONObject], idField: String, modifiedField: String) -> Set<Int> {
        var outdated: Set<Int> = []
        guard records.count > 1 else { return outdated }
        var latest: [ExactString: (at: Int, ms: Int64)] = [:]
        latest.reserveCapacity(records.count)
        for (n, record) in records.enumerated() {
            guard let key = record[idField], let id = SoupTransaction.keyText(key).map(ExactString.init),
                  let m = Stamp.read(record[modifiedField]) else { continue }
            guard let seen = latest[id] else {
                latest[id] = (n, m.ms)
                continue
            }
            if m.ms >= seen.ms {
                outdated.insert(seen.at)
                latest[id] = (n, m.ms)
            } else {
                outdated.insert(n)
            }
        }
        return outdated
    }
}
