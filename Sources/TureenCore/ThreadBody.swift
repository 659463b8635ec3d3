import Glibc

/// Work for a thread of its own: subclasses override `main`. Non-generic,
/// because a C thread function cannot name a generic type (a generic
/// class's thread holds a non-generic body instead).
open class ThreadBody {
    public init() {}

    /// What the thread does; it ends when this returns.
    open func main() {}

    /// Runs `main` on a new thread, which keeps this object alive until it
    /// ends. `purpose` completes the error: "could not start a thread to …".
    public func start(_ purpose: String) throws -> pthread_t {
        let box = Unmanaged.passRetained(self)
        var t = pthread_t()
        let rc = pthread_create(&t, nil, { raw in
            guard let raw else { return nil }
            Unmanaged<ThreadBody>.fromOpaque(raw).takeRetainedValue().main()
            return nil
        }, box.toOpaque())
        guard rc == 0 else {
            box.release()
            throw TureenError(.internal, "could not start a thread to \(purpose) (pthread_create: \(rc))")
        }
        return t
    }
}

extension ThreadBody {
    /// Runs `body` on a new thread, which keeps what `body` holds alive
    /// until it returns; for a type whose thread calls one of its methods.
    public static func start(_ purpose: String, _ body: @escaping () -> Void) throws -> pthread_t {
        try Closure(body).start(purpose)
    }

    private final class Closure: ThreadBody {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
        override func main() { body() }
    }
}
