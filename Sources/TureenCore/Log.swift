import Glibc

/// The library's log: levels, categories, and one sink for the process.
///
/// Off until the host sets a sink (tureen_log_set) or the environment
/// variable TUREEN_LOG names a level, which logs to standard error. Messages
/// are built only when their level is on. What is logged never holds a key,
/// a token or a password: URLs are logged without their query values (a
/// target's parameters may hold an API key), and targets not at all.
public enum Log {
    public enum Level: Int32, Sendable, Comparable {
        case off = 0, error = 1, warning = 2, info = 3, debug = 4

        public static func < (a: Level, b: Level) -> Bool { a.rawValue < b.rawValue }

        init?(name: String) {
            switch name.lowercased() {
            // C8o's names too: its "none", "fatal" and "trace" are the nearest of ours.
            case "off", "none", "0": self = .off
            case "error", "fatal", "1": self = .error
            case "warning", "warn", "2": self = .warning
            case "info", "3": self = .info
            case "debug", "trace", "4": self = .debug
            default: return nil
            }
        }
    }

    public enum Category: String, Sendable { case store, query, sync, http }

    public typealias Sink = @Sendable (Level, Category, String) -> Void

    private static let current = Locked<(level: Level, sink: Sink?)>(fromEnvironment)

    /// TUREEN_LOG=error|warning|info|debug: that level, to standard error.
    private static let fromEnvironment: (level: Level, sink: Sink?) = {
        guard let v = getenv("TUREEN_LOG"), let l = Level(name: String(cString: v)), l != .off else { return (.off, nil) }
        return (l, toStandardError)
    }()

    private static let toStandardError: Sink = { level, category, message in
        let line = "tureen \(level) [\(category.rawValue)] \(message)\n"
        var bytes = Array(line.utf8)
        // One write(2) per line, so lines from several threads never interleave.
        _ = bytes.withUnsafeMutableBytes { Glibc.write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }

    /// Sets the level and the sink (nil: standard error).
    public static func set(level: Level, sink: Sink?) {
        current.withLock { $0 = (level, sink ?? fromEnvironment.sink ?? toStandardError) }
    }

    public static func isOn(_ l: Level) -> Bool { current.withLock { l != .off && l <= $0.level && $0.sink != nil } }

    /// Logs `message()` at `l`, built only when `l` is on. The sink runs on
    /// the calling thread, outside the log's lock.
    public static func write(_ l: Level, _ category: Category, _ message: @autoclosure () -> String) {
        guard let s = current.withLock({ l != .off && l <= $0.level ? $0.sink : nil }) else { return }
        s(l, category, message())
    }

    /// A URL as logs show it: the query's names without their values.
    public static func url(_ u: String) -> String {
        guard let q = u.firstIndex(of: "?") else { return u }
        let names = u[u.index(after: q)...].split(separator: "&").map { $0.split(separator: "=", maxSplits: 1)[0] }
        return String(u[..<q]) + "?" + names.map { "\($0)=…" }.joined(separator: "&")
    }
}
