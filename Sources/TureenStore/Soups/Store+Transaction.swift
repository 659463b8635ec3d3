import Glibc
import TureenCore

/// Transactions the host opens across calls (RhoConnect's start/stop bulk
/// update, Couchbase Lite's batches): the writes of the thread that opened
/// it commit or roll back together, and listeners hear of them once, at the
/// commit. The store's write lock is held from begin to commit, so other
/// threads' writes wait; the opening thread's own calls run inside it.
extension Store {
    public func beginTransaction() throws {
        if ownsTransaction { throw TureenError.misuse("this thread already has a transaction open on the store '\(path)'") }
        lock.lock()
        guard let c = writerIfOpen else {
            lock.unlock()
            throw TureenError.misuse("the store '\(path)' is closed")
        }
        do {
            try c.execute("BEGIN IMMEDIATE")
        } catch {
            lock.unlock()
            throw error
        }
        c.inHostTransaction = true
        setOwner(pthread_self())
    }

    public func commitTransaction() throws {
        try end { c in
            try requireOpenTransaction(c)
            do {
                try capture.settle(c)
                try Fault.point("store.commit", failing: .io)
                try c.execute("COMMIT")
                Fault.point("store.committed")
            } catch {
                if c.inTransaction { _ = try? c.execute("ROLLBACK") }
                throw error
            }
        }
    }

    public func rollbackTransaction() throws {
        try end { c in
            if c.inTransaction { try c.execute("ROLLBACK") }
        }
    }

    /// Ends the thread's transaction with `finish`, then publishes what it
    /// committed and lets other writers in, whatever `finish` threw.
    private func end(_ finish: (Connection) throws -> Void) throws {
        guard ownsTransaction else { throw TureenError.misuse("no transaction is open on this thread for the store '\(path)'") }
        defer {
            setOwner(nil)
            lock.unlock()
        }
        guard let c = writerIfOpen else { throw TureenError.misuse("the store '\(path)' is closed") }
        defer {
            c.inHostTransaction = false
            publishCommitted(c)
        }
        try finish(c)
    }
}
