import TureenStore
import TureenCore

/// An open store with what the engines above it keep for it: its sync
/// manager (made on first use, with the loop, the cache refresher, the
/// callback targets and credential refreshers it owns). One `close` ends
/// them in order, so no layer above needs to know what runs per store.
/// (couchbase-lite-C's replicator is an object with its own lifetime; a
/// session is that owner for everything Tureen runs beside a store.)
public final class Session: @unchecked Sendable {
    // Unchecked: `manager` and `closing` are touched only under `lock`;
    // `store` is immutable and thread-safe itself.
    public let store: Store
    private let lock = Lock()
    private var manager: SyncManager?
    private var closing = false

    public init(_ store: Store) {
        self.store = store
        EngineSoups.reserve(in: store)
    }

    /// The store's sync engine, made on first use; MISUSE once close has
    /// begun. A call that found the session just before close would
    /// otherwise make a manager after close stopped the old one: nothing
    /// would ever stop its loop or release its callback targets.
    public func sync() throws -> SyncManager {
        try lock.withLock {
            if closing { throw TureenError.misuse("the store handle is closed") }
            if let m = manager { return m }
            let m = SyncManager(store)
            manager = m
            return m
        }
    }

    /// Closes the session. `forget` runs once close is sure to go ahead
    /// (another thread's transaction refuses it first): the caller drops
    /// what leads to this session (its handles), so no new call finds it.
    /// Then this thread's own transaction ends (a call the sync engine
    /// waits for may be waiting for the write lock it holds), the engine
    /// stops and waits for its calls to servers, and the store closes.
    public func close(forget: () -> Void) throws {
        try store.refuseCloseDuringOthersTransaction()
        forget()
        try? store.rollbackTransaction()
        let m = lock.withLock { () -> SyncManager? in
            closing = true
            defer { manager = nil }
            return manager
        }
        m?.stop()
        Fault.point("session.close.engine_stopped")
        try store.close()
    }
}
