import Glibc
import TureenStore
import TureenCore

/// Makes again, on a thread of its own, writes a store handle could not
/// make when it meant to (the store locked past its busy timeout by
/// another handle or process, a full disk): the attempt `wake` gives is
/// called, with
/// pauses growing from `firstPauseMs` to `longestPauseMs`, until it says
/// nothing is left or `stop` is called. Waiting for the handle's next call
/// instead left what it could not write (a sync's outcome, the claim that
/// keeps other processes off its soup) unwritten for as long as the handle
/// stayed idle, though the lock had long been freed.
final class WriteRetrier: @unchecked Sendable {
    // Unchecked: the vars are touched only under `state`'s mutex.
    private let state = Condition()
    /// Writes what is left; true once nothing is.
    private var attempt: () -> Bool = { true }
    private var thread: pthread_t?
    private var running = false
    /// Set by `wake` while the thread runs: an attempt that found nothing
    /// left may have come before the new write was kept.
    private var woken = false
    private var stopped = false
    static let firstPauseMs = 10
    static let longestPauseMs = 1_000

    /// Something is left to write, which `attempt` writes (true once
    /// nothing is left): the thread starts, unless it runs or the retrier
    /// has stopped.
    func wake(_ attempt: @escaping () -> Bool) {
        let (start, ended): (Bool, pthread_t?) = state.withLock {
            if stopped { return (false, nil) }
            self.attempt = attempt
            if running {
                woken = true
                return (false, nil)
            }
            running = true
            defer { thread = nil }
            return (true, thread)
        }
        guard start else { return }
        // A thread that ended is joined, so its resources go.
        if let t = ended { pthread_join(t, nil) }
        do {
            let t = try ThreadBody.start("write again what the store refused") { self.loop() }
            // A stop that came meanwhile found no thread to wait for: this
            // one (which sees `stopped` and ends) is waited for here.
            let missed = state.withLock { () -> Bool in
                if stopped { return true }
                thread = t
                return false
            }
            if missed { pthread_join(t, nil) }
        } catch {
            state.withLock { running = false }
            Log.write(.warning, .sync, "\(error): what could not be written waits for the handle's next write of claims, or its close")
        }
    }

    /// Ends the thread and waits for it (an attempt under way ends first:
    /// up to the store's busy timeout). No thread starts after this.
    func stop() {
        let t: pthread_t? = state.withLock {
            stopped = true
            state.broadcast()
            defer { thread = nil }
            return thread
        }
        if let t, pthread_equal(t, pthread_self()) == 0 { pthread_join(t, nil) }
    }

    private func loop() {
        var pauseMs = WriteRetrier.firstPauseMs
        while true {
            let attempt: (() -> Bool)? = state.withLock {
                if !stopped { state.wait(ms: pauseMs) }
                woken = false
                return stopped ? nil : self.attempt
            }
            guard let attempt else { break }
            let done = attempt()
            let again: Bool = state.withLock {
                if stopped || (done && !woken) {
                    running = false
                    return false
                }
                return true
            }
            guard again else { return }
            pauseMs = done ? WriteRetrier.firstPauseMs : min(pauseMs * 2, WriteRetrier.longestPauseMs)
        }
        state.withLock { running = false }
    }
}
