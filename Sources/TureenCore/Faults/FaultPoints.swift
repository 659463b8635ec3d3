#if TUREEN_FAULTS
import Glibc

/// The fault points' side that runs: each point's hits counted in this
/// process, the plan's decision carried out, and a line on standard error
/// for every fault that fires, so a harness can record it and replay it.
@usableFromInline
enum FaultPoints {
    /// Every line this facility writes starts with it.
    static let prefix = "tureen fault: "

    private static let plan = FaultPlan.fromEnvironment()
    private static let hits = Locked<[String: UInt64]>([:])

    /// Counts a hit of `name` and does what the plan decides; returns the
    /// error to throw when it decides to fail with `code` (nil: go on).
    @usableFromInline
    static func hit(_ name: StaticString, failing code: TureenCode?) -> TureenError? {
        guard let plan else { return nil }
        let point = name.description
        let n = hits.withLock { counts -> UInt64 in
            let next = (counts[point] ?? 0) + 1
            counts[point] = next
            return next
        }
        guard let d = plan.decide(point, hit: n, canFail: code != nil) else { return nil }
        var line = "\(prefix)point=\(point) hit=\(n) action=\(d.action.rawValue)"
        switch d.action {
        case .crash:
            say(line + " seed=\(plan.seed)\n")
            _exit(FaultPlan.crashStatus)
        case .delay:
            say(line + " ms=\(d.delayMs) seed=\(plan.seed)\n")
            usleep(useconds_t(d.delayMs * 1000))
            return nil
        case .error:
            let c = code ?? .internal
            line += " code=\(c.rawValue) seed=\(plan.seed)\n"
            say(line)
            return TureenError(c, "an injected fault at \(point) (hit \(n)): \(c == .network ? "the connection broke" : "disk I/O error")")
        }
    }

    /// One write(2), so lines of several threads never interleave.
    static func say(_ text: String) {
        var bytes = Array(text.utf8)
        _ = bytes.withUnsafeMutableBytes { Glibc.write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }
}
#endif
