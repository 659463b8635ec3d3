import Glibc
import TureenStore
import TureenCore

/// The calls of one store handle that talk to a server (syncs, cached
/// fetches, blob fetches). Between requests they hold no lock of the
/// store's, so close, which waits for the store's calls through its lock,
/// would not wait for them: they would find the store closed under them
/// (MISUSE) and a sync would stay RUNNING. Close raises `closing` instead,
/// which every target of the handle sees (each call stops at its next
/// request, or within a second of the one in flight, as a cancel stops it:
/// a sync ends STOPPED, its state saved), and waits for them to return.
/// Registrations of the host's callables are such calls too: they touch
/// no store lock either, and close releases what they registered.
public final class ServerCalls: @unchecked Sendable {
    // Unchecked: `running` and `ended` are touched only under `state`'s mutex.
    private let state = Condition()
    /// The calls running now, by thread.
    private var running: [UInt: Int] = [:]
    private var ended = false
    /// Raised by `end`; SyncManager.makeTarget joins it to every target's flag.
    let closing = CancelFlag()

    /// Runs `body` as one such call; refused once close has begun (a call
    /// that looked the handle up just before).
    public func run<T>(_ body: () throws -> T) throws -> T {
        let thread = UInt(pthread_self())
        try state.withLock {
            if ended { throw TureenError.misuse("the store handle is closed") }
            running[thread, default: 0] += 1
        }
        defer {
            state.withLock {
                running[thread] = running[thread].flatMap { $0 > 1 ? $0 - 1 : nil }
                state.broadcast()
            }
        }
        return try body()
    }

    /// Refuses new calls, stops the running ones and waits for them to
    /// return. Not for those of this thread: close called from a progress
    /// or callback-target function is above its own call on the stack, and
    /// waiting for that call would wait for ever; it stops at its next
    /// request once close has returned.
    func end() {
        let me = UInt(pthread_self())
        state.withLock {
            ended = true
            closing.raise()
            while running.contains(where: { $0.key != me }) { state.wait() }
        }
    }
}
