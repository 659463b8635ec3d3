import TureenCore

/// Carries committed changes from the handle that wrote them to every
/// handle of the same file in this process that has listeners (a file may
/// be opened more than once). Handles register their notifier when their
/// first listener arrives and leave when they close.
enum ChangeHub {
    private final class Entry {
        weak var notifier: Notifier?
        init(_ n: Notifier) { notifier = n }
    }

    /// Keyed by the canonical path's bytes (ExactString): Linux names files
    /// by bytes, so NFC and NFD spellings of one name are two files.
    private struct Table {
        var byPath: [ExactString: [Entry]] = [:]
        /// Commits published per file and per publishing handle: a notifier
        /// compares the count of the file's other handles with what SQLite
        /// says changed, to tell this process's writes from another process's.
        var published: [ExactString: [ObjectIdentifier: UInt64]] = [:]
        /// Per file, the commits of its handles that closed (see `retire`):
        /// still counted, so the sum another handle's notifier sees never
        /// goes back.
        var retired: [ExactString: UInt64] = [:]

        /// Forgets a file once no handle of it publishes and no notifier
        /// compares: a notifier that joins later starts its count afresh
        /// (its first look compares nothing).
        mutating func dropIfUnused(_ path: ExactString) {
            if published[path]?.isEmpty == true { published[path] = nil }
            if published[path] == nil && byPath[path] == nil { retired[path] = nil }
        }
    }
    private static let table = Locked(Table())

    static func join(_ n: Notifier, path: String) {
        let path = ExactString(path)
        table.withLock { $0.byPath[path, default: []].append(Entry(n)) }
    }

    static func leave(_ n: Notifier, path: String) {
        let path = ExactString(path)
        table.withLock { t in
            t.byPath[path]?.removeAll { $0.notifier == nil || $0.notifier === n }
            if t.byPath[path]?.isEmpty == true { t.byPath[path] = nil }
            t.dropIfUnused(path)
        }
    }

    /// A handle of the file closes: its count moves to the file's retired
    /// commits, and the file is forgotten once nothing of it is left. Kept
    /// per handle, the counts grew by one entry per handle ever opened (and
    /// one file entry per path ever written), never given back.
    static func retire(path: String, handle: ObjectIdentifier) {
        let path = ExactString(path)
        table.withLock { t in
            if let n = t.published[path]?.removeValue(forKey: handle) { t.retired[path, default: 0] &+= n }
            t.dropIfUnused(path)
        }
    }

    static func publish(path: String, from handle: ObjectIdentifier, _ commits: [[SoupChange]]) {
        let path = ExactString(path)
        let targets: [Notifier] = table.withLock { t in
            t.published[path, default: [:]][handle, default: 0] &+= 1
            return t.byPath[path]?.compactMap { $0.notifier } ?? []
        }
        for n in targets { n.enqueue(.changes(commits)) }
    }

    /// Commits published for the file by its handles other than `handle`.
    static func publishedCount(path: String, byOtherThan handle: ObjectIdentifier) -> UInt64 {
        let path = ExactString(path)
        return table.withLock { t in
            (t.published[path] ?? [:]).reduce(t.retired[path] ?? 0) { $1.key == handle ? $0 : $0 &+ $1.value }
        }
    }
}
