import Glibc
import TureenCore

/// SHA-256 taken on a thread of its own, so that hashing a large blob
/// overlaps reading and writing it on the caller's thread: hashed inline,
/// it was about a fifth of an export's time (bench/blobs_bench.c).
///
/// The caller hands pieces over in order and leaves each piece's bytes
/// untouched until `waitHashed` says it was taken.
final class HashingThread: ThreadBody, @unchecked Sendable {
    // Unchecked: `pieces`, `hashed` and `closed` are touched only inside
    // `cond.withLock`; `hasher` by the thread, and by `run` only once it
    // saw, under the lock, that the thread hashed every piece.
    private let cond = Condition()
    private var pieces: [UnsafeRawBufferPointer] = []
    private var hashed = 0
    private var closed = false
    private let hasher: SHA256

    private init(hasher: SHA256) {
        self.hasher = hasher
    }

    /// Calls `body` with a hashing thread and returns the digest of every
    /// piece it submitted. The thread has ended when this returns or
    /// throws, so the pieces' memory may go then.
    static func run(_ body: (HashingThread) throws -> Void) throws -> [UInt8] {
        let h = HashingThread(hasher: try SHA256())
        let thread = try h.start("hash a blob")
        defer {
            h.cond.withLock {
                h.closed = true
                h.cond.broadcast()
            }
            pthread_join(thread, nil)
        }
        try body(h)
        h.cond.withLock {
            while !h.pieces.isEmpty { h.cond.wait() }
        }
        return try h.hasher.finish()
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
