import Glibc
import TureenCore

/// SHA-256 taken beside the caller's work, so that hashing a large blob
/// overlaps reading, sealing and writing it: hashed inline, it was about a
/// fifth of an export's time and most of an import's beside the disk's
/// (bench/blobs_bench.c).
///
/// The caller hands pieces over in order and leaves each piece's bytes
/// untouched until `waitHashed` says it was taken. A thread of its own
/// hashes them; so does the caller while it waits, whenever that thread
/// has not started the next piece: on a machine whose other CPU is busy
/// the thread may get little time, and the caller, which would otherwise
/// sit idle waiting for it, hashes in its stead. One piece is hashed at a
/// time, in order, whichever thread does it.
final class HashingThread: ThreadBody, @unchecked Sendable {
    // Unchecked: `pieces`, `taken`, `hashed`, `busy`, `closed` and `thread`
    // are touched only inside `cond.withLock`; `hasher` only by the thread
    // that set `busy`, until it clears it (the lock orders one after the
    // other), and by `finish` once the thread ended.
    private let cond = Condition()
    private var pieces: [UnsafeRawBufferPointer] = []
    /// Pieces submitted that a thread started hashing, and finished.
    private var taken = 0
    private var hashed = 0
    /// Whether a thread is hashing a piece now.
    private var busy = false
    private var closed = false
    private var thread: pthread_t?
    private let hasher: SHA256

    private init(hasher: SHA256) {
        self.hasher = hasher
    }

    /// A thread that goes on with `hasher`, which nothing else may touch
    /// until `finish`.
    static func start(_ hasher: SHA256) throws -> HashingThread {
        let h = HashingThread(hasher: hasher)
        let t = try h.start("hash a blob")
        h.cond.withLock { h.thread = t }
        return h
    }

    /// Calls `body` with a hashing thread and returns the digest of every
    /// piece it submitted. The thread has ended when this returns or
    /// throws, so the pieces' memory may go then.
    static func run(_ body: (HashingThread) throws -> Void) throws -> [UInt8] {
        let h = try start(SHA256())
        defer { h.stop() }
        try body(h)
        return try h.finish()
    }

    /// The digest of every piece submitted, once they are all hashed and
    /// the thread ended.
    func finish() throws -> [UInt8] {
        waitHashed(cond.withLock { taken + pieces.count })
        stop()
        return try hasher.finish()
    }

    /// Ends the thread once every piece submitted was hashed (their memory
    /// may go then); again, nothing.
    func stop() {
        let t: pthread_t? = cond.withLock {
            closed = true
            cond.broadcast()
            defer { thread = nil }
            return thread
        }
        if let t { pthread_join(t, nil) }
    }

    /// Queues `piece` to be hashed after those before it.
    func submit(_ piece: UnsafeRawBufferPointer) {
        cond.withLock {
            pieces.append(piece)
            cond.broadcast()
        }
    }

    /// Waits until the first `count` pieces submitted were hashed, hashing
    /// those the thread has not started meanwhile.
    func waitHashed(_ count: Int) {
        while cond.withLock({ hashed < count }) {
            _ = hashNext(waiting: true, until: count)
        }
    }

    /// Hashes the next piece, when no thread is hashing one and fewer
    /// than `until` are hashed; false when it took none. `waiting`: first
    /// waits until there is one to take or `until` are hashed.
    private func hashNext(waiting: Bool, until: Int = .max) -> Bool {
        let piece: UnsafeRawBufferPointer? = cond.withLock {
            while waiting && (busy || pieces.isEmpty) && hashed < until { cond.wait() }
            guard hashed < until, !busy, !pieces.isEmpty else { return nil }
            busy = true
            taken += 1
            return pieces.removeFirst()
        }
        guard let piece else { return false }
        hasher.update(piece)
        cond.withLock {
            busy = false
            hashed += 1
            cond.broadcast()
        }
        return true
    }

    override func main() {
        while true {
            let more: Bool = cond.withLock {
                while (busy || pieces.isEmpty) && !(closed && pieces.isEmpty && !busy) { cond.wait() }
                return !pieces.isEmpty
            }
            guard more else { return }
            _ = hashNext(waiting: false)
        }
    }
}
