import Glibc
import TureenCore

/// Stops queries that run too long or that the host interrupts.
///
/// SQLite calls a progress handler every few thousand virtual-machine steps
/// of a statement; returning non-zero ends the statement with
/// SQLITE_INTERRUPT. A query arms its connection with a deadline and the
/// store's interrupt generation as it was when the query began: raising the
/// generation (`tureen_store_interrupt`, or closing the store) stops every
/// query already running and none that starts afterwards.
final class InterruptGeneration: @unchecked Sendable {
    // Unchecked: `value` is touched only under `lock`.
    private let lock = Lock()
    private var value: UInt64 = 0

    var current: UInt64 { lock.withLock { value } }
    func raise() { lock.withLock { value &+= 1 } }
}

/// One connection's limit while a query runs on it. Only the thread that
/// holds the connection arms and reads it; the generation is shared.
final class QueryLimit {
    enum Stop { case none, timedOut, interrupted }

    private let generation: InterruptGeneration
    private var startedAt: UInt64 = 0
    private var deadlineNs: UInt64 = 0  // 0: no deadline
    private(set) var stop = Stop.none

    init(_ generation: InterruptGeneration) { self.generation = generation }

    /// SQLite's VM steps between two checks: a check costs a clock read,
    /// and this keeps the latency of a stop far below a millisecond.
    static let stepsPerCheck: Int32 = 4000

    func arm(timeoutMs: Int) {
        startedAt = generation.current
        deadlineNs = timeoutMs > 0 ? Clock.monotonicNs() &+ UInt64(timeoutMs) * 1_000_000 : 0
        stop = .none
    }

    /// Called by SQLite from inside a step; true stops the statement.
    func shouldStop() -> Bool {
        if generation.current != startedAt {
            stop = .interrupted
        } else if deadlineNs != 0 && Clock.monotonicNs() >= deadlineNs {
            stop = .timedOut
        }
        return stop != .none
    }
}
