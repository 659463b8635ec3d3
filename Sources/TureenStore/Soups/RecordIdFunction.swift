import TureenCore

/// `tureen_record_id(soup)`: an entry's own record id for the change feed,
/// its top-level "id" (the id Kinto and the sync's default id field give a
/// record): a string as text, an integer as an integer, NULL otherwise.
/// Never an error: an entry's feed row must not fail its write.
enum RecordIdFunction {
    static let name = "tureen_record_id"
    /// The member that holds it, at the entry's top.
    static let member = Array("id".utf8)
    private static let path: [[UInt8]] = [member]

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

    /// The record id in an entry's stored text: .int, .string, or nil.
    static func recordId(in stored: UnsafeBufferPointer<UInt8>) -> JSON? {
        recordId(of: try? JSONScanner.nested(stored, path))
    }

    /// The same from text starting at the value of the entry's `member`,
    /// where a skim of the entry found it: the value read as `nested` reads
    /// it, without walking the members before it again.
    static func recordId(valueIn text: UnsafeBufferPointer<UInt8>) -> JSON? {
        var p = JSONParser(text)
        return recordId(of: try? p.value(depth: 1))
    }

    private static func recordId(of value: JSON?) -> JSON? {
        switch value {
        case .int(let i)?: return .int(i)
        case .string(let s)?: return .string(s)
        default: return nil
        }
    }
}
