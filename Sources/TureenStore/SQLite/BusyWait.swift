import Glibc
import TureenCore

/// How a connection waits for a lock that another connection (another
/// handle of the file, another process) holds: it tries again every
/// millisecond at first, then every 4 ms, until busy_timeout_ms has passed.
///
/// SQLite's own busy timeout sleeps longer and longer between tries (up to
/// 100 ms), and only finds the lock free if it wakes in one of the short
/// gaps between other writers' transactions: under a steady stream of
/// writes from two other handles, a writer waited out its whole 5 s and
/// failed BUSY while the others committed hundreds of times
/// (test_listeners' writers on two handles and a process, 2 runs of 3 on
/// a fast machine). Short naps find those gaps.
final class BusyWait {
    private let limitNs: UInt64
    private var startedNs: UInt64 = 0

    init(ms: Int) { limitNs = UInt64(max(ms, 0)) * 1_000_000 }

    /// SQLite's busy handler: `tries` is 0 at the first try of each wait.
    static let handler: SQLiteAPI.BusyHandler = { context, tries in
        guard let context else { return 0 }
        return Unmanaged<BusyWait>.fromOpaque(context).takeUnretainedValue().again(tries) ? 1 : 0
    }

    /// Whether to try again, after a nap that never runs past the limit.
    private func again(_ tries: Int32) -> Bool {
        let now = Clock.monotonicNs()
        if tries == 0 { startedNs = now }
        let waited = now &- startedNs
        guard waited < limitNs else { return false }
        // A millisecond for the first 100 tries, then 4: a wait that lasts
        // (behind a long transaction) costs 250 wakeups a second, no more.
        let napNs: UInt64 = tries < 100 ? 1_000_000 : 4_000_000
        usleep(UInt32(min(napNs, limitNs - waited) / 1000))
        return true
    }
}
