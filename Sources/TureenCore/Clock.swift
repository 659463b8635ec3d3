import Glibc

public enum Clock {
    /// Wall-clock time in epoch milliseconds, the unit of _soupLastModifiedDate.
    public static func nowMs() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }

    /// Nanoseconds on a clock that never goes back, for measuring spans.
    public static func monotonicNs() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }
}
