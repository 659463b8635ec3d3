/// `tureen_record_id(soup)`: an entry's own record id for the change feed,
/// its top-level "id" (the id Kinto and the sync's default id field give a
/// record): a string as text, an integer as an integer, NULL otherwise.
/// Never an error: an entry's feed row must not fail its write.
enum RecordIdFunction {
    static let name = "tureen_record_id"
    private static let path: [[UInt8]] = [Array("id".utf8)]

    static func register(_ c: Connection) throws {
        let flags: Int32 = 1 /* SQLITE_UTF8 */ | 0x800 /* SQLITE_DETERMINISTIC */
        let rc = c.api.create_function_v2(c.db, name, 1, flags, nil, recordId, nil, nil, nil)
        if rc != 0 { throw c.error(rc, "registering \(name)") }
    }

    private static let recordId: SQLiteAPI.SQLFunction = { ctx, argc, argv in
        guard let api = try? SQLCipherLibrary.api(), argc == 1, let argv = argv else { return }
        switch api.text(argv[0]).flatMap(recordId(in:)) {
        case .int(let i)?: api.result_int64(ctx, i)
        case .string(let s)?: api.resultText(ctx, s, from: name)
        default: api.result_null(ctx)
        }
    }

    /// The path to give `JSONScanner.project(_:paths:)` for
    /// `recordId(projected:)`.
    static let projectedPath: [[UInt8]] = path

    /// The same as `recordId(in:)` on the text `projected` came from: an
    /// upsert projecting its index paths reads the record id in the same
    /// walk. `project` flattens an array where `nested` keeps it, so an
    /// array met (`crossedArray`) is no record id, as in `recordId(in:)`.
    static func recordId(projected: JSONScanner.Projected) -> JSON? {
        guard !projected.crossedArray, projected.values.count == 1 else { return nil }
        switch projected.values[0] {
        case .int(let i): return .int(i)
        case .string(let s): return .string(s)
        default: return nil
        }
    }

    /// The record id in an entry's stored text: .int, .string, or nil.
    static func recordId(in stored: UnsafeBufferPointer<UInt8>) -> JSON? {
        switch try? JSONScanner.nested(stored, path) {
        case .int(let i)?: return .int(i)
        case .string(let s)?: return .string(s)
        default: return nil
        }
    }
}
