import Glibc
import TureenStore
import TureenCore

/// Threads that push sync up's batches over connections of their own, so
/// several batches are on the wire at once (a server with several workers
/// answers them side by side). Each thread owns one ChangePusher; batches
/// are taken in the order they are submitted, and their results wait,
/// by index, for the sync's thread, which commits them in order.
final class UploadPool {
    typealias Outcome = Result<[Settled], Error>

    /// What the threads and the sync's thread share.
    private final class Board: @unchecked Sendable {
        // Unchecked: `jobs`, `results` and `closed` are touched only inside `cond.withLock`.
        let cond = Condition()
        var jobs: [(index: Int, part: [Pending])] = []
        var results: [Int: Outcome] = [:]
        var closed = false
    }

    /// One thread's share: its own pusher (its own connection) and the board.
    private final class Worker: ThreadBody, @unchecked Sendable {
        // Unchecked: `pusher` is used by this worker's thread alone; `board` is locked.
        let pusher: ChangePusher
        let board: Board
        init(_ pusher: ChangePusher, _ board: Board) {
            self.pusher = pusher
            self.board = board
        }

        override func main() {
            while true {
                let job: (index: Int, part: [Pending])? = board.cond.withLock {
                    while board.jobs.isEmpty && !board.closed { board.cond.wait() }
                    return board.jobs.isEmpty ? nil : board.jobs.removeFirst()
                }
                guard let job else { return }
                let outcome = Outcome { try pusher.push(job.part) }
                board.cond.withLock {
                    board.results[job.index] = outcome
                    board.cond.broadcast()
                }
            }
        }
    }

    private let board = Board()
    private var threads: [pthread_t] = []

    /// Starts one thread per pusher; on failure, those started are stopped.
    init(_ pushers: [ChangePusher]) throws {
        for p in pushers {
            do {
                threads.append(try Worker(p, board).start("send batches"))
            } catch {
                close()
                throw error
            }
        }
    }

    /// Queues batch `index` for the next free thread.
    func submit(_ index: Int, _ part: [Pending]) {
        board.cond.withLock {
            board.jobs.append((index, part))
            board.cond.broadcast()
        }
    }

    /// Batch `index`'s outcome, waiting for it; nil once closed without it.
    func outcome(_ index: Int) -> Outcome? {
        board.cond.withLock {
            while board.results[index] == nil && !board.closed {
                board.cond.wait()
            }
            return board.results.removeValue(forKey: index)
        }
    }

    /// Batch `index`'s outcome if it has arrived, without waiting.
    func finished(_ index: Int) -> Outcome? {
        board.cond.withLock { board.results.removeValue(forKey: index) }
    }

    /// Drops the batches no thread has taken, lets the threads finish the
    /// ones they hold (bounded by the HTTP timeouts and the cancel flag:
    /// raise it first to have them end at once) and waits for them.
    func close() {
        board.cond.withLock {
            board.jobs.removeAll()
            board.closed = true
            board.cond.broadcast()
        }
        for t in threads { pthread_join(t, nil) }
        threads.removeAll()
    }

    deinit { close() }
}
