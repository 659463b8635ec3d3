import Glibc
import TureenCore

/// Who does a piece of work that must have one doer among every handle
/// and process of a store: this process (its pid and the start time the
/// kernel gives it, so a pid used again by a later process is told apart)
/// and one worker in it. Work whose owner is gone (killed, crashed, or a
/// worker of this process that gave up) may be taken over: a download's
/// staging blob goes on from its bytes (BlobStaging), an engine's run
/// that was going is run again.
///
/// Asking the kernel is sound because a store in WAL mode is only ever
/// opened by processes of one machine (they share its memory-mapped index).
/// Processes in other pid namespaces (containers sharing a volume) may look
/// gone while they live; what keeps a download safe then is that a takeover
/// writes into a new file, and a writer checks that the staging blob still
/// names it (BlobStaging.owns) before it names the blob, so a writer that
/// lost its blob fails instead of writing into another's.
public struct LiveOwner: Equatable, Sendable {
    let pid: Int32
    /// The process's start time in clock ticks since boot; nil where /proc
    /// cannot say.
    let started: Int64?
    let worker: Int

    /// The workers of this process at work now.
    private static let live = Locked<Set<Int>>([])
    private static let serial = Locked(0)
    private static let known = Locked<(pid: Int32, started: Int64?)?>(nil)

    /// This process, asked again after a fork: a child must not write as
    /// its parent, whose workers it cannot see.
    private static var here: (pid: Int32, started: Int64?) {
        let pid = getpid()
        return known.withLock { k in
            if let h = k, h.pid == pid { return h }
            let h = (pid: pid, started: startTime(of: pid))
            k = h
            return h
        }
    }

    /// A new owner for a worker of this process, alive until `release`.
    public static func make() -> LiveOwner {
        let n = serial.withLock { n -> Int in
            n += 1
            return n
        }
        _ = live.withLock { $0.insert(n) }
        let h = here
        return LiveOwner(pid: h.pid, started: h.started, worker: n)
    }

    public func release() {
        guard pid == Self.here.pid else { return }
        _ = Self.live.withLock { $0.remove(worker) }
    }

    public var text: String { "\(pid):\(started.map(String.init) ?? "-"):\(worker)" }

    init(pid: Int32, started: Int64?, worker: Int) {
        self.pid = pid
        self.started = started
        self.worker = worker
    }

    /// Reads what `text` wrote; nil for anything else.
    public init?(text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, let p = Int32(parts[0]), p > 0, let w = Int(parts[2]) else { return nil }
        let s = parts[1] == "-" ? nil : Int64(parts[1])
        guard parts[1] == "-" || s != nil else { return nil }
        self.init(pid: p, started: s, worker: w)
    }

    /// Whether the worker may still be at work. In doubt (an owner from
    /// another process whose start time /proc cannot give) it is alive:
    /// the cost of that is a download that starts afresh, or a sync refused
    /// as running until that pid ends.
    public var isAlive: Bool {
        let h = Self.here
        if pid == h.pid && started == h.started {
            return Self.live.withLock { $0.contains(worker) }
        }
        if kill(pid, 0) != 0 && errno == ESRCH { return false }
        guard let s = started, let now = Self.startTime(of: pid) else { return true }
        return s == now
    }

    /// Field 22 of /proc/<pid>/stat, read after the command name's closing
    /// parenthesis (the name itself may hold spaces and parentheses).
    static func startTime(of pid: Int32) -> Int64? {
        let fd = open("/proc/\(pid)/stat", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 1024)
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard n > 0, let name = buffer[0..<n].lastIndex(of: UInt8(ascii: ")")) else { return nil }
        let fields = buffer[(name + 1)..<n].split(separator: UInt8(ascii: " "))
        // fields[0] is field 3 (the state), so field 22 is fields[19].
        guard fields.count > 19 else { return nil }
        return Int64(String(decoding: fields[19], as: UTF8.self))
    }
}
