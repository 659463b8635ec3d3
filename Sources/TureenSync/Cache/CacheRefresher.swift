import Glibc
import TureenStore
import TureenCore

/// Refreshes cached answers in the background for ReturnCacheDataAndReload:
/// one thread per store handle, started on first use, taking requests in
/// order, each key once however often it is asked meanwhile. The new answer
/// is written in one transaction, so a process killed during a refresh
/// leaves the old answer readable; listeners on `cache_soup` hear of the
/// new one. A refresh that fails leaves the old answer and is logged.
final class CacheRefresher: @unchecked Sendable {
    // Unchecked: every var is touched only under `state`'s mutex.
    private let state = Condition()
    /// The manager whose store and targets the refreshes use; set by the
    /// first refresh, let go by stop.
    private var manager: SyncManager?
    private var queue: [(CacheRequest, CacheOptions)] = []
    private var queued = Set<String>()
    private var thread: pthread_t?
    private var stopping = false
    /// Raised by stop: the refresh in flight ends at its next request.
    private let cancel = CancelFlag()

    /// Queues a refresh of `request`; false when the refresher is stopping
    /// or cannot start its thread (the caller's answer then says so).
    func enqueue(_ request: CacheRequest, _ options: CacheOptions, for manager: SyncManager) -> Bool {
        state.withLock {
            guard !stopping else { return false }
            if thread == nil {
                self.manager = manager
                do {
                    thread = try ThreadBody.start("refresh the cache") { self.work() }
                } catch {
                    Log.write(.error, .sync, "\(error)")
                    return false
                }
            }
            if queued.insert(request.key).inserted {
                queue.append((request, options))
                state.broadcast()
            }
            return true
        }
    }

    private func work() {
        while true {
            let job: (CacheRequest, CacheOptions)? = state.withLock {
                while queue.isEmpty && !stopping { state.wait() }
                return stopping ? nil : queue.first
            }
            guard let (request, options) = job, let m = state.withLock({ manager }) else { return }
            refresh(request, options, m)
            state.withLock {
                queue.removeFirst()
                queued.remove(request.key)
                state.broadcast()
            }
        }
    }

    private func refresh(_ request: CacheRequest, _ options: CacheOptions, _ manager: SyncManager) {
        let shelf = CacheShelf(store: manager.store)
        let fetch = CachedFetch(manager: manager, request: request, options: options)
        do {
            // The budget as it is when the answer is written: the app may
            // have lowered it since this refresh was queued.
            _ = try shelf.write(request, try fetch.fetch(cancel), at: options.now, ttl: options.ttlMs, budget: { manager.cacheBudget })
        } catch {
            Log.write(.info, .sync, "cache refresh of \(Log.url(request.config.url)) failed, the cached answer stays: \(error)")
        }
    }

    /// Stops the thread: the refresh in flight is cancelled at its next
    /// request and waited for; queued ones are dropped.
    func stop() {
        let t: pthread_t? = state.withLock {
            stopping = true
            state.broadcast()
            return thread
        }
        cancel.raise()
        if let t = t { pthread_join(t, nil) }
        state.withLock { manager = nil }
    }
}
