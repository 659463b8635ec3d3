import Glibc
import TureenCore

/// Which process wrote a feed row: listeners hear other processes' rows as
/// external changes, their own process's already came as its commits. A
/// random number per process, drawn again in a child after fork().
enum WriterToken {
    private static let drawn = Locked<(pid: pid_t, token: Int64)?>(nil)

    static func current() -> Int64 {
        let pid = getpid()
        return drawn.withLock { d in
            if let d = d, d.pid == pid { return d.token }
            let t = Int64.random(in: Int64.min...Int64.max)
            d = (pid, t)
            return t
        }
    }
}
