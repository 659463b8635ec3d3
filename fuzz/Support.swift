import Glibc
@testable import TureenCore
@testable import TureenStore

// What every fuzz target shares: inputs read the way the C ABI reads them,
// invariants that fail loudly, and a scratch store opened once per process.

/// The input as `inputString` in the C ABI hands it to Swift: the bytes up
/// to the first NUL, and only when they are UTF-8 (the ABI refuses others
/// before any parser sees them).
func abiString(_ data: UnsafePointer<UInt8>, _ size: Int) -> String? {
    let all = UnsafeBufferPointer(start: data, count: size)
    let n = all.firstIndex(of: 0) ?? size
    return String(validating: UnsafeBufferPointer(rebasing: all[..<n]), as: UTF8.self)
}

/// An invariant: when it fails the process traps, which libFuzzer records
/// as a crash with the input that caused it.
func require(_ ok: Bool, _ why: @autoclosure () -> String) {
    if !ok { fatalError("invariant broken: \(why())") }
}

/// Errors a hostile input may cause: a status for the host, never a trap.
/// Any other error type escaping a parser is a bug.
func refused(_ e: Error) {
    require(e is TureenError, "a non-TureenError escaped: \(e)")
}

/// A scratch store in a temporary directory, removed when the process ends.
enum ScratchStore {
    nonisolated(unsafe) private static var dir = ""

    static func open(queryTimeoutMs: Int = 200) -> Store {
        var template = Array("/tmp/tureen-fuzz-XXXXXX".utf8CString)
        guard let d = mkdtemp(&template) else { fatalError("mkdtemp failed") }
        dir = String(cString: d)
        atexit { _ = system("rm -rf '\(ScratchStore.dir)'") }
        do {
            let options = try StoreOptions.parseOpen("{\"unencrypted\":true,\"query_timeout_ms\":\(queryTimeoutMs)}")
            return try Store.open(path: dir + "/fuzz.db", options: options)
        } catch {
            fatalError("could not open the scratch store: \(error)")
        }
    }
}

/// Soups shaped like the tests' (SmartStore's employees and departments,
/// with every index type), filled with a few entries, for targets that
/// query. Registered on first use.
enum SampleSoups {
    static func fill(_ store: Store) {
        do {
            try store.registerSoup("employees", specs: [
                IndexSpec(path: "firstName", type: .string), IndexSpec(path: "lastName", type: .string),
                IndexSpec(path: "deptCode", type: .string), IndexSpec(path: "employeeId", type: .string),
                IndexSpec(path: "managerId", type: .string), IndexSpec(path: "salary", type: .integer),
                IndexSpec(path: "rating", type: .floating), IndexSpec(path: "bio", type: .fullText),
                IndexSpec(path: "address.city", type: .fullText), IndexSpec(path: "tags", type: .string),
            ])
            try store.registerSoup("departments", specs: [IndexSpec(path: "name", type: .string), IndexSpec(path: "deptCode", type: .string)])
            _ = try store.upsert(soup: "employees", entries: """
                [{"firstName":"Ada","lastName":"Lovelace","deptCode":"ENG","employeeId":"1","salary":300,"rating":4.5,
                  "bio":"first programmer of the analytical engine","address":{"city":"London","zip":"10001"},"tags":["math","poetry"]},
                 {"firstName":"Alan","lastName":"Turing","deptCode":"ENG","employeeId":"2","managerId":"1","salary":200,"rating":5,
                  "bio":"computable numbers and the imitation game","address":{"city":"Wilmslow","zip":"10002"},"tags":[]},
                 {"firstName":"Grace","lastName":"Hopper","deptCode":"OPS","employeeId":"3","managerId":"1","salary":250,
                  "bio":"compilers, COBOL and a moth","address":[{"city":"New York"},{"city":"Arlington"}],"tags":["navy"]}]
                """, externalIdPath: nil)
            _ = try store.upsert(soup: "departments", entries: #"[{"name":"Engineering","deptCode":"ENG"},{"name":"Operations","deptCode":"OPS"}]"#,
                                 externalIdPath: nil)
        } catch {
            fatalError("could not fill the sample soups: \(error)")
        }
    }
}
