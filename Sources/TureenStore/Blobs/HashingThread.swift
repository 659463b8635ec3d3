import Glibc
import TureenCore

/// SHA-256 taken on a thread of its own, so that hashing a large blob
/// overlaps reading, sealing and writing it on the caller's thread: hashed
/// inline, it was about a fifth of an export's time and most of an
/// import's beside the disk's (bench/blobs_bench.c).
///
/// The caller hands pieces over in order and leaves each piece's bytes
/// untouched until `waitHashed` says it was taken.
final class HashingThread: ThreadBody, @unchecked Sendable {
    // Unchecked: `pieces`, `hashed`, `closed` and `thread` are touched only
    // inside `cond.withLock`; `hasher` by the thread, and by `finish` only
    // once the thread ended.
    private let cond = Condition()
    private var pieces: [UnsafeRawBufferPointer] = []
    private var hashed = 0
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

    /// The digest of every piece submitted, once the thread hashed them
    /// all and ended.
    func finish() throws -> [UInt8] {
        stop()
        return try hasher.finish()
    }

    /// Ends the thread once it hashed every piece submitted (their memory
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

    /// Waits until the first `count` pieces submitted were hashed.
    func waitHashed(_ count: Int) {
        cond.withLock {
            while hashed < count { cond.wait() }
        }
    }

    override func main() {
        while true {
            // A piece leaves the queue once hashed: an empty queue tells
            // `run` that every piece was.
            let piece: UnsafeRawBufferPointer? = cond.withLock {
                while pieces.isEmpty && !closed { cond.wait() }
                return pieces.first
            }
            guard let piece else { return }
            hasher.update(piece)
            cond.withLock {
                pieces.removeFirst()
                hashed += 1
                cond.broadcast()
            }
        }
    }
}
