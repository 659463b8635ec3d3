import Glibc
import TureenCore

/// The store files this process has open, by canonical path, so that removing
/// or rekeying a file that another handle still uses is refused, not a
/// corruption. Paths are told apart by their bytes, as Linux names files.
enum OpenStores {
    private static let counts = Locked<[ExactString: Int]>([:])

    static func canonical(_ path: String) -> String {
        guard let p = realpath(path, nil) else { return path }
        defer { free(p) }
        return String(cString: p)
    }

    static func retain(_ path: String) {
        counts.withLock { $0[ExactString(path), default: 0] += 1 }
    }

    static func release(_ path: String) {
        let path = ExactString(path)
        counts.withLock { counts in
            let n = (counts[path] ?? 1) - 1
            counts[path] = n > 0 ? n : nil
        }
    }

    static func count(_ path: String) -> Int { counts.withLock { $0[ExactString(path)] ?? 0 } }
}
