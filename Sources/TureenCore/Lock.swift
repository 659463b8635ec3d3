import Glibc

/// A plain pthread mutex. Unlike Synchronization's Mutex, it can be held
/// across calls (a transaction the host opened) and tried.
public final class Lock: @unchecked Sendable {
    // Unchecked: a pthread mutex is made to be shared; the pointer never changes.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    public init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    @inline(__always)
    public func withLock<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// For a lock held across calls (a transaction the host opened): the
    /// same thread must unlock it.
    public func lock() { pthread_mutex_lock(mutex) }
    public func unlock() { pthread_mutex_unlock(mutex) }
    /// Takes the lock only if it is free.
    public func tryLock() -> Bool { pthread_mutex_trylock(mutex) == 0 }
}

/// A mutex with a condition variable, for waits on a state it guards.
public final class Condition: @unchecked Sendable {
    // Unchecked: a pthread mutex and condition are made to be shared; the pointers never change.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let cond: UnsafeMutablePointer<pthread_cond_t>

    public init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        cond = .allocate(capacity: 1)
        cond.initialize(to: pthread_cond_t())
        pthread_cond_init(cond, nil)
    }

    deinit {
        pthread_cond_destroy(cond)
        cond.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` holding the mutex; `body` may call `wait` and `broadcast`.
    public func withLock<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// Releases the mutex until another thread broadcasts; call with it held.
    public func wait() { pthread_cond_wait(cond, mutex) }

    /// As `wait`, but for `ms` at most.
    public func wait(ms: Int) {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        let ns = Int(ts.tv_nsec) + (ms % 1000) * 1_000_000
        ts.tv_sec += ms / 1000 + ns / 1_000_000_000
        ts.tv_nsec = ns % 1_000_000_000
        pthread_cond_timedwait(cond, mutex, &ts)
    }

    /// Wakes every waiter; call with the mutex held.
    public func broadcast() { pthread_cond_broadcast(cond) }
}
