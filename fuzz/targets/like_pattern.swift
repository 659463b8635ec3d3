@testable import TureenCore
@testable import TureenStore

// LIKE and GLOB patterns against texts, Tureen's matcher beside SQLite's own.
// The input is "kind pattern \u{1} text": the first character picks LIKE,
// LIKE with ESCAPE '\' or GLOB. SQLite's matcher is exponential in the
// wildcards, so it only answers for short patterns; Tureen's must agree
// with it there, and answer for every input.

private let sqlite: Connection = {
    do { return try Connection(path: ":memory:", api: try SQLCipherLibrary.api(), create: true) } catch { fatalError("\(error)") }
}()

private let statements: [Statement] = {
    do {
        return try ["SELECT ?2 LIKE ?1", "SELECT ?2 LIKE ?1 ESCAPE '\\'", "SELECT ?2 GLOB ?1"].map { try sqlite.prepare($0) }
    } catch { fatalError("\(error)") }
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard let input = abiString(data, size), let first = input.unicodeScalars.first else { return 0 }
    let choice = Int(first.value % 3)
    let rest = input.unicodeScalars.dropFirst()
    let parts = rest.split(separator: "\u{1}", maxSplits: 1, omittingEmptySubsequences: false)
    var pattern = String(String.UnicodeScalarView(parts[0]))
    var text = parts.count > 1 ? String(String.UnicodeScalarView(parts[1])) : ""
    let kind: PatternMatch.Kind = choice == 2 ? .glob : .like
    let ours = pattern.withUTF8 { p in
        text.withUTF8 { t in PatternMatch(p, kind: kind, escape: choice == 1 ? 0x5C : nil).matches(t, stop: { false }) }
    }
    require(ours != nil, "a match gave up though nothing asked it to stop")
    let wildcards = pattern.unicodeScalars.filter { "%_*?[".unicodeScalars.contains($0) }.count
    guard wildcards <= 6, text.unicodeScalars.count <= 64 else { return 0 }
    let s = statements[choice]
    s.reset()
    s.bind(1, pattern)
    s.bind(2, text)
    do {
        require(try s.step(), "a LIKE gave no row")
    } catch { refused(error); return 0 }
    require(ours == (s.int64(0) == 1), "'\(text)' \(kind) '\(pattern)': SQLite says \(s.int64(0))")
    return 0
}
