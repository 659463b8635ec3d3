#if TUREEN_FAULTS
import Glibc

/// What a fault point does when it fires.
enum FaultAction: String, CaseIterable, Sendable {
    /// `_exit(FaultPlan.crashStatus)`: no atexit handler, no flush, as a kill.
    case crash
    /// Throws the error the surrounding code would see (points that can fail).
    case error
    /// Sleeps up to the plan's longest delay, then goes on.
    case delay
}

/// The faults a process meets, read once from its environment. Faults are
/// off unless TUREEN_FAULT_SEED is set; then
///   TUREEN_FAULT_RATE     the chance (0...1) that a hit of a point fires (default 0.01)
///   TUREEN_FAULT_POINTS   which points may fire, comma-separated: a name, a
///                         prefix ending in `*`, or either with `@n` for its
///                         n-th hit only (default: every point)
///   TUREEN_FAULT_ACTIONS  which of crash, error, delay may happen (default: all)
///   TUREEN_FAULT_DELAY_MS the longest delay (default 200)
/// Whether a hit fires, and how, is a pure function of the seed, the
/// point's name and its hit number in the process (`decide`), so the same
/// seed on the same commit and the same workload meets the same faults.
struct FaultPlan: Sendable {
    /// A process a fault crashed exits with this status.
    static let crashStatus: Int32 = 77

    struct Pattern: Sendable {
        let name: String
        let isPrefix: Bool
        let hit: UInt64?

        func matches(_ point: String, hit n: UInt64) -> Bool {
            (isPrefix ? point.hasPrefix(name) : point == name) && (hit.map { $0 == n } ?? true)
        }
    }

    struct Decision: Sendable, Equatable {
        let action: FaultAction
        let delayMs: UInt64
    }

    let seed: UInt64
    let rate: Double
    let patterns: [Pattern]
    let actions: [FaultAction]
    let maxDelayMs: UInt64

    /// What `point`'s `hit`-th hit (from 1) does; nil: nothing. A point
    /// that cannot fail never draws `error`: its choice is among the rest.
    func decide(_ point: String, hit: UInt64, canFail: Bool) -> Decision? {
        guard patterns.isEmpty || patterns.contains(where: { $0.matches(point, hit: hit) }) else { return nil }
        let offered = actions.filter { canFail || $0 != .error }
        guard !offered.isEmpty else { return nil }
        let draw = FaultPlan.mix(seed ^ FaultPlan.mix(FaultPlan.fnv1a(point) &+ hit &* 0x9E37_79B9_7F4A_7C15))
        // The top 53 bits as a fraction of 1, the precision of a Double.
        guard Double(draw >> 11) < rate * 9_007_199_254_740_992 else { return nil }
        let second = FaultPlan.mix(draw)
        let action = offered[Int(second % UInt64(offered.count))]
        return Decision(action: action, delayMs: action == .delay ? 1 + FaultPlan.mix(second) % max(maxDelayMs, 1) : 0)
    }

    /// SplitMix64's finaliser: every bit of the input moves every bit of the output.
    static func mix(_ x: UInt64) -> UInt64 {
        var z = x &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// FNV-1a of the point's name: fixed across processes and builds, as
    /// Swift's own hashing (seeded per process) is not.
    static func fnv1a(_ s: String) -> UInt64 {
        var h: UInt64 = 0xCBF2_9CE4_8422_2325
        for b in s.utf8 { h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01B3 }
        return h
    }
}

extension FaultPlan {
    /// The plan the environment sets; nil when faults are off. A setting
    /// that does not parse ends the process: a harness that asked for
    /// faults must not run without them, believing it had.
    static func fromEnvironment() -> FaultPlan? {
        func env(_ name: String) -> String? { getenv(name).map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } }
        guard let seedText = env("TUREEN_FAULT_SEED") else { return nil }
        guard let seed = seedText.hasPrefix("0x") ? UInt64(seedText.dropFirst(2), radix: 16) : UInt64(seedText) else {
            refuse("TUREEN_FAULT_SEED", seedText, "an unsigned 64-bit number")
        }
        var rate = 0.01
        if let t = env("TUREEN_FAULT_RATE") {
            guard let r = Double(t), r >= 0, r <= 1 else { refuse("TUREEN_FAULT_RATE", t, "a number from 0 to 1") }
            rate = r
        }
        var patterns: [Pattern] = []
        for item in (env("TUREEN_FAULT_POINTS") ?? "").split(separator: ",") {
            let parts = item.split(separator: "@", maxSplits: 1, omittingEmptySubsequences: false)
            var name = String(parts[0])
            var hit: UInt64?
            if parts.count == 2 {
                guard let n = UInt64(parts[1]), n > 0 else { refuse("TUREEN_FAULT_POINTS", String(item), "a point, prefix* or either @hit (from 1)") }
                hit = n
            }
            let isPrefix = name.hasSuffix("*")
            if isPrefix { name.removeLast() }
            patterns.append(Pattern(name: name, isPrefix: isPrefix, hit: hit))
        }
        var actions = FaultAction.allCases
        if let t = env("TUREEN_FAULT_ACTIONS") {
            actions = []
            for item in t.split(separator: ",") {
                guard let a = FaultAction(rawValue: String(item)) else { refuse("TUREEN_FAULT_ACTIONS", t, "crash, error and/or delay") }
                actions.append(a)
            }
        }
        var maxDelayMs: UInt64 = 200
        if let t = env("TUREEN_FAULT_DELAY_MS") {
            guard let d = UInt64(t), d <= 60_000 else { refuse("TUREEN_FAULT_DELAY_MS", t, "milliseconds from 0 to 60000") }
            maxDelayMs = d
        }
        return FaultPlan(seed: seed, rate: rate, patterns: patterns, actions: actions, maxDelayMs: maxDelayMs)
    }

    private static func refuse(_ name: String, _ value: String, _ wanted: String) -> Never {
        FaultPoints.say("\(FaultPoints.prefix)\(name)='\(value)' is not \(wanted); exiting\n")
        _exit(2)
    }
}
#endif
