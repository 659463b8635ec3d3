import Glibc
import TureenStore

/// One page of a feed downloading on its own thread while the caller commits
/// the page before it. Sync down's time is the server's plus the local
/// writes; overlapping them hides the shorter of the two (bench/sync_bench.c
/// measures it). Only targets that say their fetch may run on any thread use
/// it: host callbacks are called on the thread that runs the sync.
final class PageFetch {
    /// What the thread touches: never the object itself, so the object's
    /// last release (which joins the thread) always happens on the caller's side.
    private struct Slot {
        var job: () throws -> FetchPage
        var result: Result<FetchPage, Error>?
    }
    private let slot: UnsafeMutablePointer<Slot>
    private var thread = pthread_t()
    private var joined = false

    init(_ job: @escaping () throws -> FetchPage) throws {
        slot = .allocate(capacity: 1)
        slot.initialize(to: Slot(job: job, result: nil))
        let rc = pthread_create(&thread, nil, { raw in
            guard let s = raw?.assumingMemoryBound(to: Slot.self) else { return nil }
            s.pointee.result = Result { try s.pointee.job() }
            return nil
        }, UnsafeMutableRawPointer(slot))
        if rc != 0 {
            joined = true
            throw TureenError(.internal, "could not start a thread to fetch the next page (pthread_create: \(rc))")
        }
    }

    /// The page, or the error the fetch ended with; waits for the thread.
    func page() throws -> FetchPage {
        join()
        guard let r = slot.pointee.result else { throw TureenError(.internal, "a page fetch ended without a result") }
        return try r.get()
    }

    /// A fetch abandoned by a failing caller still finishes (bounded by the
    /// HTTP timeouts and the cancel flag) before the target is used again.
    private func join() {
        if !joined {
            pthread_join(thread, nil)
            joined = true
        }
    }

    deinit {
        join()
        slot.deinitialize(count: 1)
        slot.deallocate()
    }
}
