import TureenCore

/// SQL functions that return JSON from Smart SQL:
///   tureen_entry(soup, id, lastModified): the entry as the host sees it;
///   tureen_path_value(soup, path): the value at a path with no index, by
///     SmartStore's projection (`JSONScanner.nested`): strings, numbers;
///     booleans as 1/0; objects and arrays (a path through arrays gives
///     arrays nested as in the document) as JSON.
/// JSON is returned as a BLOB that starts with `tag`, 16 random bytes drawn
/// once per process, which tells the row writer to embed it as JSON rather
/// than as hex. A literal cannot carry the tag by chance, but SQL can copy
/// it, so `ResultRows` checks what follows it.
enum EntryFunction {
    static let name = "tureen_entry"
    static let pathName = "tureen_path_value"
    static let tag: [UInt8] = (0..<16).map { _ in UInt8.random(in: 0...255) }  // the system's CSPRNG

    static func register(_ c: Connection) throws {
        let flags: Int32 = 1 /* SQLITE_UTF8 */ | 0x800 /* SQLITE_DETERMINISTIC */
        var rc = c.api.create_function_v2(c.db, name, 3, flags, nil, entry, nil, nil, nil)
        if rc == 0 { rc = c.api.create_function_v2(c.db, pathName, 2, flags, nil, pathValue, nil, nil, nil) }
        if rc != 0 { throw c.error(rc, "registering the Smart SQL functions") }
    }

    private static func resultJSON(_ api: SQLiteAPI, _ ctx: OpaquePointer?, _ w: JSONWriter) {
        let bytes = tag + w.bytes
        guard let n = Int32(exactly: bytes.count) else { return api.result_error(ctx, "\(name): value too large", -1) }
        bytes.withUnsafeBytes { api.result_blob(ctx, $0.baseAddress, n, SQLiteAPI.transient) }
    }

    private static let entry: SQLiteAPI.SQLFunction = { ctx, argc, argv in
        guard let api = try? SQLCipherLibrary.api(), argc == 3, let argv = argv else { return }
        guard let stored = api.text(argv[0]) else { return api.result_null(ctx) }
        let w = JSONWriter(reserving: stored.count + 64)
        EntryText.write(stored: stored, id: api.value_int64(argv[1]), modified: api.value_int64(argv[2]), into: w)
        resultJSON(api, ctx, w)
    }

    private static let pathValue: SQLiteAPI.SQLFunction = { ctx, argc, argv in
        guard let api = try? SQLCipherLibrary.api(), argc == 2, let argv = argv else { return }
        guard let stored = api.text(argv[0]), let path = api.text(argv[1]) else { return api.result_null(ctx) }
        let segments = path.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false).map { Array($0) }
        let found: JSON?
        do {
            found = try JSONScanner.nested(stored, segments)
        } catch {
            return api.result_error(ctx, "\(pathName): an entry is not valid JSON", -1)
        }
        guard let value = found else { return api.result_null(ctx) }
        switch value {
        case .null: api.result_null(ctx)
        case .bool(let b): api.result_int64(ctx, b ? 1 : 0)
        case .int(let i): api.result_int64(ctx, i)
        case .double(let d): api.result_double(ctx, d)
        case .string(let s): api.resultText(ctx, s, from: pathName)
        case .array, .object:
            let w = JSONWriter()
            w.write(value)
            resultJSON(api, ctx, w)
        }
    }
}
