/// A value that is only ever read or changed under its own lock: what a
/// process-wide table (open files, listeners per file) needs to be safe to
/// share between threads in Swift 6 mode.
public final class Locked<Value>: @unchecked Sendable {
    // Unchecked: `value` is private and touched only inside `withLock`.
    private let lock = Lock()
    private var value: Value

    public init(_ value: Value) { self.value = value }

    @inline(__always)
    public func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        try lock.withLock { try body(&value) }
    }
}
