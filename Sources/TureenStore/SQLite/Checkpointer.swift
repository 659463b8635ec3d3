import CSQLCipher
import Glibc
import TureenCore

/// Copies the write-ahead log back into the database file on a thread of
/// its own, so that no commit waits for it.
///
/// SQLite's default runs that copy inside the commit that takes the log past
/// 1000 pages: megabytes written and two fdatasyncs, paid by whichever write
/// crossed the line (one upsert call of a batch, a sync down's last page).
/// That was about a third of a long batch upsert's time (bench/soups_bench.c).
/// Here the writer's WAL hook only wakes this thread, which checkpoints
/// PASSIVE on a reader connection: it waits for neither the readers nor the
/// writer, and copies what it can. Should the log still reach
/// `inlineFrames` (the thread starved, or not running), the commit
/// checkpoints inline, as SQLite would have.
final class Checkpointer: @unchecked Sendable {
    // Unchecked: `wanted`, `stopped`, `thread` and `startFailed` are touched under `condition` only.
    /// SQLite's own autocheckpoint size, in pages.
    static let wakeFrames: Int32 = 1000
    /// From here on, commits checkpoint themselves: 32 MB of 4 KiB pages.
    static let inlineFrames: Int32 = 8000
    /// What the log file is cut back to when it starts over (journal_size_limit).
    static let logBytesKept = 4 << 20

    private let condition = Condition()
    private var wanted = false
    private var stopped = false
    private var thread: pthread_t?
    private var startFailed = false
    /// Held for each checkpoint the thread runs (see `paused`).
    private let running = Lock()
    private let api: SQLiteAPI
    /// Where the thread finds a connection to checkpoint on.
    private let readers: ReaderPool
    /// The store's file, for the log when an inline checkpoint fails.
    private let path: String

    init(api: SQLiteAPI, readers: ReaderPool, path: String) {
        self.api = api
        self.readers = readers
        self.path = path
    }

    /// Runs `body` while no checkpoint of this thread's runs: SQLite refuses
    /// a truncating checkpoint (compact) while another is under way.
    func paused<T>(_ body: () throws -> T) rethrows -> T {
        try running.withLock(body)
    }

    /// Ends the thread once the checkpoint it runs, if any, is done.
    func stop() {
        let t = condition.withLock { () -> pthread_t? in
            stopped = true
            condition.broadcast()
            defer { thread = nil }
            return thread
        }
        if let t { pthread_join(t, nil) }
    }

    private func loop() {
        while condition.withLock({ () -> Bool in
            while !wanted && !stopped { condition.wait() }
            wanted = false
            return !stopped
        }) {
            running.withLock {
                // Every reader busy, or the store closing: a later commit
                // wakes it again. (While a rekey pauses the readers, take
                // waits for it; a rekey does not need `running`.)
                guard let c = try? readers.take() else { return }
                defer { readers.give(c) }
                c.checkpointPassive()
            }
        }
    }

    /// Takes over the checkpoints of `c` (the writer) from SQLite's automatic
    /// ones, which this hook replaces.
    func install(on c: Connection) {
        let me = Unmanaged.passUnretained(self).toOpaque()
        _ = c.api.wal_hook(c.db, { ctx, db, _, frames in
            if let ctx { Unmanaged<Checkpointer>.fromOpaque(ctx).takeUnretainedValue().committed(db, frames: frames) }
            return SQLITE_OK  // the commit stands, whatever happens here
        }, me)
    }

    /// After each commit of the writer's, with the log's length in pages.
    /// The thread starts with the first checkpoint: a store that never
    /// writes that much never has it (nor does a process forked to write a
    /// little, where starting threads is not safe). Without it
    /// (pthread_create failed), commits checkpoint inline, as SQLite does.
    private func committed(_ db: OpaquePointer?, frames: Int32) {
        guard frames >= Checkpointer.wakeFrames else { return }
        let woken = condition.withLock { () -> Bool in
            guard !stopped else { return false }
            if thread == nil && !startFailed {
                thread = try? ThreadBody.start("checkpoint the store's log") { [self] in loop() }
                startFailed = thread == nil
            }
            guard thread != nil else { return false }
            wanted = true
            condition.broadcast()
            return true
        }
        if let db, !woken || frames >= Checkpointer.inlineFrames { Connection.checkpointPassive(db, api: api, path: path) }
    }
}
