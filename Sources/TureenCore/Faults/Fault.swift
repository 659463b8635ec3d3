/// Fault points: places in the library where a test build (compiled with
/// the TUREEN_FAULTS condition by `make lib-faults`) may crash, fail or
/// pause, as the seed in its environment decides (see docs/faults.md and
/// FaultPlan). In every other build a point is an empty inlined function:
/// neither code nor its name reaches the library.
public enum Fault {
    /// A point where the process may die (as if killed) or pause.
    @inlinable @inline(__always)
    public static func point(_ name: StaticString) {
        #if TUREEN_FAULTS
        _ = FaultPoints.hit(name, failing: nil)
        #endif
    }

    /// A point that may also fail the way the code around it fails for
    /// real: it throws a TureenError with `code` (IO where a store write
    /// fails, NETWORK where a transfer does), so what follows the error is
    /// the path a real failure takes.
    @inlinable @inline(__always)
    public static func point(_ name: StaticString, failing code: TureenCode) throws {
        #if TUREEN_FAULTS
        if let e = FaultPoints.hit(name, failing: code) { throw e }
        #endif
    }
}
