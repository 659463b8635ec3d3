import TureenCore

/// The SQL function tureen_index_value(entry_text, path, type), registered on
/// every connection: an entry's indexed value for a path and index type, by
/// the same rules as upsert. Alter and reindex compute whole columns with it
/// in one UPDATE, inside SQLite's loop instead of a round trip per row.
enum IndexFunction {
    static let name = "tureen_index_value"

    static func register(_ c: Connection) throws {
        let flags: Int32 = 1 /* SQLITE_UTF8 */ | 0x800 /* SQLITE_DETERMINISTIC */
        let rc = c.api.create_function_v2(c.db, name, 3, flags, nil, call, nil, nil, nil)
        if rc != 0 { throw c.error(rc, "registering \(name)") }
    }

    private static let call: SQLiteAPI.SQLFunction = { ctx, argc, argv in
        guard let api = try? SQLCipherLibrary.api(), argc == 3, let argv = argv else { return }
        guard let entry = api.text(argv[0]), let path = api.text(argv[1]), let typeText = api.text(argv[2]),
              let type = IndexType(rawValue: String(decoding: typeText, as: UTF8.self)) else {
            api.result_null(ctx)
            return
        }
        let segments = path.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false).map { Array($0) }
        guard let (values, crossed) = try? JSONScanner.project(entry, segments) else {
            api.result_error(ctx, "tureen_index_value: an entry is not valid JSON", -1)
            return
        }
        switch IndexValue.from(values, crossed: crossed, type: type) {
        case .null: api.result_null(ctx)
        case .int(let v): api.result_int64(ctx, v)
        case .double(let v): api.result_double(ctx, v)
        case .text(let s): api.resultText(ctx, s, from: name)
        }
    }
}
