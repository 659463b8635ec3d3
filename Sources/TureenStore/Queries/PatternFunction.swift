import TureenCore

/// LIKE and GLOB on every connection, by `PatternMatch` in place of SQLite's
/// own: `like(pattern, text)`, `like(pattern, text, escape)` and
/// `glob(pattern, text)` are what SQLite calls for the operators. A match
/// that outlives its query's limit fails the statement, and `limited` then
/// reports the timeout or the interrupt.
enum PatternFunction {
    /// SQLite's default SQLITE_LIMIT_LIKE_PATTERN_LENGTH, kept.
    static let maxPatternBytes = 50_000

    /// `c` must outlive its functions, which it does: they go with its handle.
    static func register(_ c: Connection) throws {
        let flags: Int32 = 1 /* SQLITE_UTF8 */ | 0x800 /* SQLITE_DETERMINISTIC */
        let owner = Unmanaged.passUnretained(c).toOpaque()
        var rc = c.api.create_function_v2(c.db, "like", 2, flags, owner, like, nil, nil, nil)
        if rc == 0 { rc = c.api.create_function_v2(c.db, "like", 3, flags, owner, like, nil, nil, nil) }
        if rc == 0 { rc = c.api.create_function_v2(c.db, "glob", 2, flags, owner, glob, nil, nil, nil) }
        if rc != 0 { throw c.error(rc, "registering LIKE and GLOB") }
    }

    private static let like: SQLiteAPI.SQLFunction = { ctx, argc, argv in
        guard let api = try? SQLCipherLibrary.api(), let argv = argv else { return }
        var escape: UInt32?
        if argc == 3 {
            guard let e = api.text(argv[2]) else { return api.result_null(ctx) }
            let decoded = PatternMatch.decode(e)
            guard decoded.count == 1 else {
                return api.result_error(ctx, "ESCAPE expression must be a single character", -1)
            }
            escape = decoded[0]
        }
        run(api, ctx, argv, .like, escape)
    }

    private static let glob: SQLiteAPI.SQLFunction = { ctx, _, argv in
        guard let api = try? SQLCipherLibrary.api(), let argv = argv else { return }
        run(api, ctx, argv, .glob, nil)
    }

    private static func run(_ api: SQLiteAPI, _ ctx: OpaquePointer?, _ argv: UnsafeMutablePointer<OpaquePointer?>,
                            _ kind: PatternMatch.Kind, _ escape: UInt32?) {
        guard let pattern = api.text(argv[0]), let text = api.text(argv[1]) else { return api.result_null(ctx) }
        guard pattern.count <= maxPatternBytes else {
            return api.result_error(ctx, "LIKE or GLOB pattern too complex", -1)
        }
        guard let owner = api.user_data(ctx) else { return api.result_error(ctx, "LIKE without its connection", -1) }
        let c = Unmanaged<Connection>.fromOpaque(owner).takeUnretainedValue()
        let matcher: PatternMatch
        if let last = c.lastPattern, last.isMade(of: pattern, kind: kind, escape: escape) {
            matcher = last
        } else {
            matcher = PatternMatch(pattern, kind: kind, escape: escape)
            c.lastPattern = matcher
        }
        let limit = c.queryLimit
        guard let matched = matcher.matches(text, stop: { limit?.shouldStop() ?? false }) else {
            return api.result_error(ctx, "the pattern match was stopped with its query", -1)
        }
        api.result_int64(ctx, matched ? 1 : 0)
    }
}
