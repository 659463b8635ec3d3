/// Read-only work runs on its own connections so that queries proceed beside
/// a write (WAL lets readers see the last commit while a writer works).
/// Connections are made on demand, up to `limit`, and reused; each costs a
/// key derivation, which is why they are kept rather than opened per call.
final class ReaderPool: @unchecked Sendable {
    private let lock = Lock()
    private var idle: [Connection] = []
    private var made = 0
    private var closed = false
    private let limit: Int
    private let open: () throws -> Connection

    init(limit: Int, open: @escaping () throws -> Connection) {
        self.limit = limit
        self.open = open
    }

    /// A connection for one read; when all `limit` are busy, nil (the caller
    /// then reads on the writer, which is always correct, only not parallel).
    func take() throws -> Connection? {
        enum Next { case reuse(Connection), make, none }
        let next: Next = try lock.withLock {
            if closed { throw TureenError.misuse("the store is closed") }
            if let c = idle.popLast() { return .reuse(c) }
            if made >= limit { return .none }
            made += 1
            return .make
        }
        switch next {
        case .reuse(let c): return c
        case .none: return nil
        case .make:
            do {
                return try open()
            } catch {
                lock.withLock { made -= 1 }
                throw error
            }
        }
    }

    func give(_ c: Connection) {
        lock.withLock {
            if closed { made -= 1 } else { idle.append(c) }
        }
    }

    func close() {
        lock.withLock {
            closed = true
            made -= idle.count
            idle.removeAll()
        }
    }
}
