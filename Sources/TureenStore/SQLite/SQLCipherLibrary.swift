import CSQLCipher
import Glibc
import TureenCore

/// SQLCipher's C functions, resolved from libsqlcipher.so.0 at run time.
///
/// SQLCipher and the system libsqlite3 export the same symbol names. Had the
/// library been linked with -lsqlcipher, a host that linked -lsqlite3 first
/// would have our calls (and SQLCipher's own internal calls) bound to the
/// plain SQLite: a store written in plaintext. Resolving through a private
/// handle, opened with RTLD_DEEPBIND when a foreign SQLite is already in the
/// global scope, binds every call to SQLCipher whatever the host loaded.
struct SQLiteAPI: @unchecked Sendable {
    // Unchecked: immutable C function pointers, resolved once; SQLCipher is built threadsafe.
    typealias DB = OpaquePointer
    typealias Stmt = OpaquePointer

    let open_v2: @convention(c) (UnsafePointer<CChar>?, UnsafeMutablePointer<OpaquePointer?>?, Int32, UnsafePointer<CChar>?) -> Int32
    let close_v2: @convention(c) (DB?) -> Int32
    let key: @convention(c) (DB?, UnsafeRawPointer?, Int32) -> Int32
    let errmsg: @convention(c) (DB?) -> UnsafePointer<CChar>?
    let errstr: @convention(c) (Int32) -> UnsafePointer<CChar>?
    let extended_errcode: @convention(c) (DB?) -> Int32
    let extended_result_codes: @convention(c) (DB?, Int32) -> Int32
    typealias BusyHandler = @convention(c) (UnsafeMutableRawPointer?, Int32) -> Int32
    let busy_handler: @convention(c) (DB?, BusyHandler?, UnsafeMutableRawPointer?) -> Int32
    let prepare_v2: @convention(c) (DB?, UnsafePointer<CChar>?, Int32, UnsafeMutablePointer<OpaquePointer?>?, UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Int32
    let step: @convention(c) (Stmt?) -> Int32
    let reset: @convention(c) (Stmt?) -> Int32
    let finalize: @convention(c) (Stmt?) -> Int32
    let clear_bindings: @convention(c) (Stmt?) -> Int32
    let bind_int64: @convention(c) (Stmt?, Int32, Int64) -> Int32
    let bind_double: @convention(c) (Stmt?, Int32, Double) -> Int32
    let bind_text: @convention(c) (Stmt?, Int32, UnsafePointer<CChar>?, Int32, (@convention(c) (UnsafeMutableRawPointer?) -> Void)?) -> Int32
    let bind_null: @convention(c) (Stmt?, Int32) -> Int32
    let bind_blob: @convention(c) (Stmt?, Int32, UnsafeRawPointer?, Int32, (@convention(c) (UnsafeMutableRawPointer?) -> Void)?) -> Int32
    let bind_parameter_count: @convention(c) (Stmt?) -> Int32
    let column_count: @convention(c) (Stmt?) -> Int32
    let column_type: @convention(c) (Stmt?, Int32) -> Int32
    let column_int64: @convention(c) (Stmt?, Int32) -> Int64
    let column_double: @convention(c) (Stmt?, Int32) -> Double
    let column_text: @convention(c) (Stmt?, Int32) -> UnsafePointer<UInt8>?
    let column_bytes: @convention(c) (Stmt?, Int32) -> Int32
    let changes: @convention(c) (DB?) -> Int32
    let total_changes: @convention(c) (DB?) -> Int32
    let last_insert_rowid: @convention(c) (DB?) -> Int64
    let stmt_readonly: @convention(c) (Stmt?) -> Int32
    let get_autocommit: @convention(c) (DB?) -> Int32
    let libversion: @convention(c) () -> UnsafePointer<CChar>?
    /// Whether `QueryMemory`'s budget is in SQLCipher's allocator.
    let queryMemoryBudget: Bool
    typealias SQLFunction = @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void
    let create_function_v2: @convention(c) (DB?, UnsafePointer<CChar>?, Int32, Int32, UnsafeMutableRawPointer?,
                                            SQLFunction?, SQLFunction?, (@convention(c) (OpaquePointer?) -> Void)?,
                                            (@convention(c) (UnsafeMutableRawPointer?) -> Void)?) -> Int32
    let value_text: @convention(c) (OpaquePointer?) -> UnsafePointer<UInt8>?
    let value_bytes: @convention(c) (OpaquePointer?) -> Int32
    let result_null: @convention(c) (OpaquePointer?) -> Void
    let result_int64: @convention(c) (OpaquePointer?, Int64) -> Void
    let result_double: @convention(c) (OpaquePointer?, Double) -> Void
    let result_text: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, Int32, (@convention(c) (UnsafeMutableRawPointer?) -> Void)?) -> Void
    let result_error: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, Int32) -> Void
    let user_data: @convention(c) (OpaquePointer?) -> UnsafeMutableRawPointer?
    let result_blob: @convention(c) (OpaquePointer?, UnsafeRawPointer?, Int32, (@convention(c) (UnsafeMutableRawPointer?) -> Void)?) -> Void
    let value_int64: @convention(c) (OpaquePointer?) -> Int64
    let column_blob: @convention(c) (OpaquePointer?, Int32) -> UnsafeRawPointer?
    let blob_open: @convention(c) (DB?, UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafePointer<CChar>?, Int64, Int32,
                                   UnsafeMutablePointer<OpaquePointer?>?) -> Int32
    let blob_bytes: @convention(c) (OpaquePointer?) -> Int32
    let blob_read: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, Int32, Int32) -> Int32
    let blob_close: @convention(c) (OpaquePointer?) -> Int32
    typealias Authorizer = @convention(c) (UnsafeMutableRawPointer?, Int32, UnsafePointer<CChar>?, UnsafePointer<CChar>?,
                                           UnsafePointer<CChar>?, UnsafePointer<CChar>?) -> Int32
    let set_authorizer: @convention(c) (DB?, Authorizer?, UnsafeMutableRawPointer?) -> Int32
    let file_control: @convention(c) (DB?, UnsafePointer<CChar>?, Int32, UnsafeMutableRawPointer?) -> Int32
    typealias UpdateHook = @convention(c) (UnsafeMutableRawPointer?, Int32, UnsafePointer<CChar>?, UnsafePointer<CChar>?, Int64) -> Void
    let update_hook: @convention(c) (DB?, UpdateHook?, UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer?
    typealias CommitHook = @convention(c) (UnsafeMutableRawPointer?) -> Int32
    let commit_hook: @convention(c) (DB?, CommitHook?, UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer?
    typealias RollbackHook = @convention(c) (UnsafeMutableRawPointer?) -> Void
    let rollback_hook: @convention(c) (DB?, RollbackHook?, UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer?
    typealias WalHook = @convention(c) (UnsafeMutableRawPointer?, DB?, UnsafePointer<CChar>?, Int32) -> Int32
    let wal_hook: @convention(c) (DB?, WalHook?, UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer?
    let wal_checkpoint_v2: @convention(c) (DB?, UnsafePointer<CChar>?, Int32, UnsafeMutablePointer<Int32>?, UnsafeMutablePointer<Int32>?) -> Int32
    typealias ProgressHandler = @convention(c) (UnsafeMutableRawPointer?) -> Int32
    let progress_handler: @convention(c) (DB?, Int32, ProgressHandler?, UnsafeMutableRawPointer?) -> Void

    /// SQLITE_TRANSIENT: SQLite copies the bound text before the call returns.
    static let transient = unsafeBitCast(-1 as Int, to: (@convention(c) (UnsafeMutableRawPointer?) -> Void).self)

    fileprivate init(handle: UnsafeMutableRawPointer) throws {
        func sym<T>(_ name: String) throws -> T {
            guard let p = dlsym(handle, name) else {
                throw TureenError(.internal, "libsqlcipher.so.0 lacks \(name): it is not a usable SQLCipher build")
            }
            return unsafeBitCast(p, to: T.self)
        }
        // Before anything can initialize the library: the allocator can
        // only be replaced before its first use.
        queryMemoryBudget = dlsym(handle, "sqlite3_config").map { QueryMemory.install(config: $0) } ?? false
        open_v2 = try sym("sqlite3_open_v2")
        close_v2 = try sym("sqlite3_close_v2")
        key = try sym("sqlite3_key")
        errmsg = try sym("sqlite3_errmsg")
        errstr = try sym("sqlite3_errstr")
        extended_errcode = try sym("sqlite3_extended_errcode")
        extended_result_codes = try sym("sqlite3_extended_result_codes")
        busy_handler = try sym("sqlite3_busy_handler")
        prepare_v2 = try sym("sqlite3_prepare_v2")
        step = try sym("sqlite3_step")
        reset = try sym("sqlite3_reset")
        finalize = try sym("sqlite3_finalize")
        clear_bindings = try sym("sqlite3_clear_bindings")
        bind_int64 = try sym("sqlite3_bind_int64")
        bind_double = try sym("sqlite3_bind_double")
        bind_text = try sym("sqlite3_bind_text")
        bind_null = try sym("sqlite3_bind_null")
        bind_blob = try sym("sqlite3_bind_blob")
        bind_parameter_count = try sym("sqlite3_bind_parameter_count")
        column_count = try sym("sqlite3_column_count")
        column_type = try sym("sqlite3_column_type")
        column_int64 = try sym("sqlite3_column_int64")
        column_double = try sym("sqlite3_column_double")
        column_text = try sym("sqlite3_column_text")
        column_bytes = try sym("sqlite3_column_bytes")
        changes = try sym("sqlite3_changes")
        total_changes = try sym("sqlite3_total_changes")
        last_insert_rowid = try sym("sqlite3_last_insert_rowid")
        stmt_readonly = try sym("sqlite3_stmt_readonly")
        get_autocommit = try sym("sqlite3_get_autocommit")
        libversion = try sym("sqlite3_libversion")
        create_function_v2 = try sym("sqlite3_create_function_v2")
        value_text = try sym("sqlite3_value_text")
        value_bytes = try sym("sqlite3_value_bytes")
        result_null = try sym("sqlite3_result_null")
        result_int64 = try sym("sqlite3_result_int64")
        result_double = try sym("sqlite3_result_double")
        result_text = try sym("sqlite3_result_text")
        result_error = try sym("sqlite3_result_error")
        user_data = try sym("sqlite3_user_data")
        result_blob = try sym("sqlite3_result_blob")
        value_int64 = try sym("sqlite3_value_int64")
        column_blob = try sym("sqlite3_column_blob")
        blob_open = try sym("sqlite3_blob_open")
        blob_bytes = try sym("sqlite3_blob_bytes")
        blob_read = try sym("sqlite3_blob_read")
        blob_close = try sym("sqlite3_blob_close")
        set_authorizer = try sym("sqlite3_set_authorizer")
        progress_handler = try sym("sqlite3_progress_handler")
        file_control = try sym("sqlite3_file_control")
        update_hook = try sym("sqlite3_update_hook")
        commit_hook = try sym("sqlite3_commit_hook")
        rollback_hook = try sym("sqlite3_rollback_hook")
        wal_hook = try sym("sqlite3_wal_hook")
        wal_checkpoint_v2 = try sym("sqlite3_wal_checkpoint_v2")
    }
}

enum SQLCipherLibrary {
    static let soname = "libsqlcipher.so.0"

    /// Loaded once per process, on first use; the library is never unloaded.
    private static let loaded: Result<SQLiteAPI, TureenError> = load()

    static func api() throws -> SQLiteAPI { try loaded.get() }

    private static func load() -> Result<SQLiteAPI, TureenError> {
        let foreign = dlsym(nil, "sqlite3_libversion")
        let alreadyLoaded = dlopen(soname, RTLD_NOW | RTLD_NOLOAD)
        var flags = RTLD_NOW | RTLD_LOCAL
        // RTLD_DEEPBIND (0x8) makes SQLCipher's internal calls bind to itself,
        // not to a libsqlite3 that precedes it in the global scope. It is only
        // used when needed because sanitizer runtimes refuse it.
        if foreign != nil && alreadyLoaded == nil { flags |= 0x8 }
        guard let handle = dlopen(soname, flags) else {
            let why = dlerror().map { String(cString: $0) } ?? "unknown reason"
            return .failure(TureenError(.io, "cannot load \(soname) (install Debian's libsqlcipher0): \(why)"))
        }
        guard let own = dlsym(handle, "sqlite3_libversion") else {
            return .failure(TureenError(.internal, "\(soname) has no sqlite3_libversion"))
        }
        if let g = foreign, g != own, alreadyLoaded != nil {
            return .failure(TureenError(.internal,
                "refusing to open stores: \(soname) was loaded into this process after another SQLite "
                + "that comes first in the global symbol scope, so SQLCipher's own calls would run in that SQLite and "
                + "could write plaintext; load libtureen before that library, or load \(soname) with RTLD_DEEPBIND"))
        }
        return Result { try SQLiteAPI(handle: handle) }.mapError { $0 as? TureenError ?? TureenError(.internal, "\($0)") }
    }
}
