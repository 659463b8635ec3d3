import Glibc
import TureenStore
import TureenCore

/// Sync down's pages, fetched ahead on a thread of their own while the
/// caller commits: the connection goes on to the next page as soon as one
/// is received, whatever the commits cost, so a slow commit (a WAL
/// checkpoint, a large page) no longer holds back the download. A page per
/// thread, started when the caller took the one before, left the server
/// idle for as long as each commit took (bench/sync_bench.c).
///
/// At most `ahead` pages wait for the caller, so memory stays flat however
/// long the feed. Targets that fetch only on the sync's thread (host
/// callbacks) are fed inline, one page per call.
final class PageFeed<Item> {
    /// What the thread touches: never the feed itself, so the feed's last
    /// release (which joins the thread) always happens on the caller's side.
    private final class Shared: ThreadBody, @unchecked Sendable {
        // Unchecked: every field is touched under `condition` only, except
        // `produce`, which only the feed's thread calls once started.
        let condition = Condition()
        let produce: () throws -> Item?
        let ahead: Int
        var ready: [Result<Item, Error>] = []
        var finished = false
        var stopped = false

        init(ahead: Int, produce: @escaping () throws -> Item?) {
            self.ahead = ahead
            self.produce = produce
        }

        override func main() {
            while true {
                let go = condition.withLock { () -> Bool in
                    while ready.count >= ahead && !stopped { condition.wait() }
                    return !stopped
                }
                guard go else { break }
                let r = Result { try produce() }
                let more = condition.withLock { () -> Bool in
                    switch r {
                    case .success(let item?): ready.append(.success(item))
                    case .success(nil): finished = true
                    case .failure(let e): ready.append(.failure(e)); finished = true
                    }
                    condition.broadcast()
                    return !finished
                }
                if !more { break }
            }
            condition.withLock {
                finished = true
                condition.broadcast()
            }
        }
    }

    private let shared: Shared
    /// Nil when fed inline.
    private var thread: pthread_t?

    /// `produce` returns the next page, or nil after the last; it runs on
    /// the feed's thread when `background`, else on the caller's.
    init(background: Bool, ahead: Int = 2, _ produce: @escaping () throws -> Item?) throws {
        shared = Shared(ahead: max(1, ahead), produce: produce)
        guard background else { return }
        thread = try shared.start("fetch the pages")
    }

    /// The next page, nil after the last, or the error fetching it ended
    /// with (after which the feed has ended); waits for the thread.
    func next() throws -> Item? {
        guard thread != nil else { return try shared.produce() }
        let r = shared.condition.withLock { () -> Result<Item, Error>? in
            while shared.ready.isEmpty && !shared.finished { shared.condition.wait() }
            guard !shared.ready.isEmpty else { return nil }
            let first = shared.ready.removeFirst()
            shared.condition.broadcast()
            return first
        }
        return try r?.get()
    }

    /// A feed left early fetches no further page; one on its way still
    /// finishes (bounded by the HTTP timeouts and the cancel flag, which a
    /// failing caller raises) before the target is used again.
    deinit {
        guard let t = thread else { return }
        shared.condition.withLock {
            shared.stopped = true
            shared.condition.broadcast()
        }
        pthread_join(t, nil)
    }
}
