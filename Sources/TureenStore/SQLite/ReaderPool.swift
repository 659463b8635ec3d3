import TureenCore

/// Read-only work runs on its own connections so that queries proceed beside
/// a write (WAL lets readers see the last commit while a writer works).
/// Connections are made on demand, up to `limit`, and reused; each costs a
/// key derivation, which is why they are kept rather than opened per call.
///
/// Rekey and close need every reader connection gone: `pause` holds new
/// readers back and waits for those in use to come back; `close` does the
/// same for good.
final class ReaderPool: @unchecked Sendable {
    // Unchecked: every var is touched only under `state`'s mutex; a connection is lent to one thread at a time.
    private let state = Condition()
    private var idle: [Connection] = []
    /// Connections alive: idle or in use.
    private var made = 0
    private var closed = false
    private var paused = false
    private let limit: Int
    private var open: () throws -> Connection

    init(limit: Int, open: @escaping () throws -> Connection) {
        self.limit = limit
        self.open = open
    }

    /// A connection for one read; when all `limit` are busy, nil (the caller
    /// then reads on the writer, which is always correct, only not parallel).
    /// While the pool is paused it waits.
    func take() throws -> Connection? {
        enum Next { case reuse(Connection), make(() throws -> Connection), none }
        let next: Next = try state.withLock {
            while paused && !closed { state.wait() }
            if closed { throw TureenError.misuse("the store is closed") }
            if let c = idle.popLast() { return .reuse(c) }
            if made >= limit { return .none }
            made += 1
            return .make(open)
        }
        switch next {
        case .reuse(let c): return c
        case .none: return nil
        case .make(let open):
            do {
                return try open()
            } catch {
                state.withLock {
                    made -= 1
                    state.broadcast()
                }
                throw error
            }
        }
    }

    func give(_ c: Connection) {
        state.withLock {
            if closed || paused { made -= 1 } else { idle.append(c) }
            state.broadcast()
        }
    }

    /// Holds new readers back and waits until every connection in use has
    /// come back; then none is open. The caller must not hold a reader.
    func pause() {
        state.withLock {
            paused = true
            drainLocked()
        }
    }

    /// Lets readers in again, opening connections with `open` from now on.
    func resume(open: @escaping () throws -> Connection) {
        state.withLock {
            self.open = open
            paused = false
            state.broadcast()
        }
    }

    /// Refuses readers for good, runs `stopRunning` (which makes long reads
    /// end), then waits for the connections in use to come back.
    func close(stopRunning: () -> Void) {
        state.withLock {
            closed = true
            state.broadcast()
        }
        stopRunning()
        state.withLock { drainLocked() }
    }

    private func drainLocked() {
        made -= idle.count
        idle.removeAll()
        while made > 0 { state.wait() }
    }
}
