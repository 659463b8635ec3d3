import Glibc

/// The store files this process has open, by canonical path, so that removing
/// or rekeying a file that another handle still uses is refused, not a
/// corruption.
enum OpenStores {
    private static let counts = Locked<[String: Int]>([:])

    static func canonical(_ path: String) -> String {
        guard let p = realpath(path, nil) else { return path }
        defer { free(p) }
        return String(cString: p)
    }

    static func retain(_ path: String) {
        counts.withLock { $0[path, default: 0] += 1 }
    }

    static func release(_ path: String) {
        counts.withLock { counts in
            let n = (counts[path] ?? 1) - 1
            counts[path] = n > 0 ? n : nil
        }
    }

    static func count(_ path: String) -> Int { counts.withLock { $0[path] ?? 0 } }
}
