import TureenCore

/// How a store is keyed and opened, parsed from the open or rekey options JSON.
public struct StoreOptions: Sendable {
    public enum Keying: Sendable, Equatable {
        case passphrase(String)
        case raw(String)  // 64 hex digits
        /// A passphrase's key derived by Tureen, with the file's salt: 96 hex
        /// digits (see KeyDerivation.swift). Never parsed from options.
        case derived(String)
        case unencrypted
    }

    /// PBKDF2-HMAC-SHA1 rounds for a passphrase. SQLCipher 3.4 knows no other
    /// KDF and defaults to 64,000 rounds; 256,000 is what SQLCipher 4 settled on.
    /// SQLCipher does not record the count in the file, so this default can
    /// never change without making existing stores unopenable.
    public static let defaultKdfIter = 256_000
    public static let defaultBusyTimeoutMs = 5_000
    /// Long enough for any query an app shows its user; short enough that
    /// a runaway one (an endless recursive CTE) cannot hold a thread for good.
    public static let defaultQueryTimeoutMs = 60_000
    /// Room for a GROUP BY or ORDER BY over a few million rows; a query that
    /// asks for more is far more likely runaway than real.
    public static let defaultQueryMemoryMb = 512

    /// How long the change feed keeps a change: 30 days, long enough for an
    /// app not opened for weeks to catch up without reading every soup again.
    public static let defaultChangesKeepMs: Int64 = 30 * 24 * 3600 * 1000
    /// How many changes the feed keeps at most: bounds its size (a row is
    /// some 50 bytes) whatever the app writes in those 30 days.
    public static let defaultChangesKeepCount: Int64 = 100_000

    public var keying: Keying
    public var kdfIter: Int?
    public var busyTimeoutMs = StoreOptions.defaultBusyTimeoutMs
    /// 0: no limit.
    public var queryTimeoutMs = StoreOptions.defaultQueryTimeoutMs
    /// 0: no limit.
    public var queryMemoryMb = StoreOptions.defaultQueryMemoryMb
    public var create = true
    /// 0: no limit.
    public var changesKeepMs = StoreOptions.defaultChangesKeepMs
    /// 0: no limit.
    public var changesKeepCount = StoreOptions.defaultChangesKeepCount
    /// How messages spell the calls they send the reader to: the face the
    /// store was opened through sets its own (never parsed from options).
    public var callNames = CallNames.swift

    public var isEncrypted: Bool { keying != .unencrypted }

    private static let openKeys: Set<String> = ["key", "raw_key", "kdf_iter", "unencrypted", "busy_timeout_ms", "query_timeout_ms",
                                                         "query_memory_mb", "create", "changes_keep_ms", "changes_keep_count"]
    private static let rekeyKeys: Set<String> = ["key", "raw_key", "kdf_iter", "unencrypted"]

    public static func parseOpen(_ text: String) throws -> StoreOptions {
        try parse(text, allowed: openKeys, what: "open options")
    }

    public static func parseRekey(_ text: String) throws -> StoreOptions {
        try parse(text, allowed: rekeyKeys, what: "rekey options")
    }

    private static func parse(_ text: String, allowed: Set<String>, what: String) throws -> StoreOptions {
        let noKey = "\(what) need a key: {\"key\": \"passphrase\"}, {\"raw_key\": \"<64 hex digits>\"}, or {\"unencrypted\": true} for a store without encryption"
        var root = JSON.null
        var repeated = false
        var text = text
        let wasArray = try text.withUTF8 { b in
            try JSONParser.parseEach(bytes: b) { _, v, element in
                root = v
                repeated = element.hadDuplicateNames
            }
        }
        guard !wasArray, case .object(let o) = root else {
            throw TureenError.invalid("\(what) must be a JSON object")
        }
        // Two values for one option are a mistake to report, not to guess at.
        if repeated { throw TureenError.invalid("\(what) name a member twice") }
        for k in o.keys where !allowed.contains(k) {
            throw TureenError.invalid("unknown \(what) member '\(k)'; known: \(allowed.sorted().joined(separator: ", "))")
        }
        var keying: [Keying] = []
        if let k = o["key"] {
            guard let s = k.stringValue, !s.isEmpty else { throw TureenError.invalid("\"key\" must be a non-empty string") }
            keying.append(.passphrase(s))
        }
        if let k = o["raw_key"] {
            guard let s = k.stringValue, s.utf8.count == 64, s.utf8.allSatisfy(isHexDigit) else {
                throw TureenError.invalid("\"raw_key\" must be a string of exactly 64 hex digits (a 256-bit key)")
            }
            keying.append(.raw(s))
        }
        if let u = o["unencrypted"] {
            guard let b = u.boolValue else { throw TureenError.invalid("\"unencrypted\" must be true or false") }
            if b { keying.append(.unencrypted) }
        }
        guard keying.count == 1, let chosen = keying.first else {
            throw TureenError.invalid(keying.isEmpty ? noKey : "\(what): give only one of \"key\", \"raw_key\" and \"unencrypted\"")
        }
        var opts = StoreOptions(keying: chosen)
        if let k = o["kdf_iter"] {
            guard case .passphrase = chosen else {
                throw TureenError.invalid("\"kdf_iter\" applies only to a passphrase \"key\"")
            }
            guard let n = k.int64Value, n >= 1, n <= 100_000_000 else {
                throw TureenError.invalid("\"kdf_iter\" must be an integer from 1 to 100000000")
            }
            opts.kdfIter = Int(n)
        }
        if let t = o["busy_timeout_ms"] {
            guard let n = t.int64Value, n >= 0, n <= Int64(Int32.max) else {
                throw TureenError.invalid("\"busy_timeout_ms\" must be a non-negative integer")
            }
            opts.busyTimeoutMs = Int(n)
        }
        if let t = o["query_timeout_ms"] {
            guard let n = t.int64Value, n >= 0, n <= Int64(Int32.max) else {
                throw TureenError.invalid("\"query_timeout_ms\" must be a non-negative integer (0: no limit)")
            }
            opts.queryTimeoutMs = Int(n)
        }
        if let t = o["query_memory_mb"] {
            guard let n = t.int64Value, n >= 0, n <= 1 << 30 else {
                throw TureenError.invalid("\"query_memory_mb\" must be an integer from 0 (no limit) to 1073741824")
            }
            opts.queryMemoryMb = Int(n)
        }
        if let t = o["changes_keep_ms"] {
            guard let n = t.int64Value, n >= 0 else {
                throw TureenError.invalid("\"changes_keep_ms\" must be a non-negative integer (0: no limit)")
            }
            opts.changesKeepMs = n
        }
        if let t = o["changes_keep_count"] {
            guard let n = t.int64Value, n >= 0 else {
                throw TureenError.invalid("\"changes_keep_count\" must be a non-negative integer (0: no limit)")
            }
            opts.changesKeepCount = n
        }
        if let c = o["create"] {
            guard let b = c.boolValue else { throw TureenError.invalid("\"create\" must be true or false") }
            opts.create = b
        }
        return opts
    }

    private static func isHexDigit(_ c: UInt8) -> Bool {
        (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66)
    }

    /// The bytes SQLCipher takes as a key: the passphrase itself, or x'HEX' for
    /// a raw key (SQLCipher's own convention, which skips the KDF).
    var keyBytes: [UInt8]? {
        switch keying {
        case .passphrase(let p): return Array(p.utf8)
        case .raw(let hex), .derived(let hex): return Array("x'\(hex)'".utf8)
        case .unencrypted: return nil
        }
    }

    var effectiveKdfIter: Int? {
        if case .passphrase = keying { return kdfIter ?? StoreOptions.defaultKdfIter }
        return nil
    }
}
