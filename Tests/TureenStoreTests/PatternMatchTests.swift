import XCTest
@testable import TureenStore
@testable import TureenCore

/// Tureen's LIKE and GLOB against SQLite's own, on random patterns and texts
/// built from the characters the rules treat specially, and on a pattern
/// SQLite's matcher takes exponential time for.
final class PatternMatchTests: XCTestCase {
    /// A connection without Tureen's functions: SQLite's matcher answers.
    private func sqlite() throws -> Connection {
        try Connection(path: ":memory:", api: try SQLCipherLibrary.api(), create: true)
    }

    private struct Generator {
        var state: UInt64
        mutating func next(_ n: Int) -> Int {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return Int(state % UInt64(n))
        }
        mutating func text(_ alphabet: [String], upTo: Int) -> String {
            (0..<next(upTo + 1)).map { _ in alphabet[next(alphabet.count)] }.joined()
        }
    }

    private func ours(_ pattern: String, _ text: String, _ kind: PatternMatch.Kind, _ escape: String?) -> Bool? {
        var p = pattern, t = text
        let esc = escape.map { e in Array(e.utf8).withUnsafeBufferPointer { PatternMatch.decode($0)[0] } }
        return p.withUTF8 { pb in
            t.withUTF8 { tb in PatternMatch(pb, kind: kind, escape: esc).matches(tb, stop: { false }) }
        }
    }

    func testAgreesWithSQLiteOnRandomPatterns() throws {
        let c = try sqlite()
        let alphabet = ["a", "b", "A", "B", "z", "%", "_", "*", "?", "[", "]", "^", "-", "\\", "é", "É", "€"]
        var g = Generator(state: 0x9E37_79B9_7F4A_7C15)
        let like = try c.prepare("SELECT ?2 LIKE ?1")
        let likeEscape = try c.prepare("SELECT ?2 LIKE ?1 ESCAPE ?3")
        let glob = try c.prepare("SELECT ?2 GLOB ?1")
        var checked = 0, matched = 0
        for round in 0..<30_000 {
            let pattern = g.text(alphabet, upTo: 6)
            let text = g.text(alphabet, upTo: 7)
            let kind: PatternMatch.Kind = round % 3 == 2 ? .glob : .like
            let escape: String? = round % 3 == 1 ? ["\\", "_", "%", "a", "é"][g.next(5)] : nil
            let s = kind == .glob ? glob : escape == nil ? like : likeEscape
            s.reset()
            s.bind(1, pattern)
            s.bind(2, text)
            if let e = escape { s.bind(3, e) }
            XCTAssertTrue(try s.step())
            let expected = s.int64(0) == 1
            XCTAssertEqual(ours(pattern, text, kind, escape), expected,
                           "\(text) \(kind) \(pattern)\(escape.map { " ESCAPE \($0)" } ?? "")")
            checked += 1
            if expected { matched += 1 }
        }
        // The draw must exercise both answers, or agreement says little.
        XCTAssertGreaterThan(matched, checked / 50)
        XCTAssertLessThan(matched, checked - checked / 50)
    }

    func testAPatternSQLiteBacktracksOnIsQuick() {
        let text = String(repeating: "a", count: 5000)
        XCTAssertEqual(ours("%a%a%a%a%a%a%b", text, .like, nil), false)
        XCTAssertEqual(ours("*a*a*a*a*a*a*b", text, .glob, nil), false)
        XCTAssertEqual(ours("%a%a%a%a%a%a%", text, .like, nil), true)
    }

    func testAMatchAsksToStopAndGivesUp() {
        // Every "a" is a place the "a" after the wildcard could start.
        let text = String(repeating: "a", count: 1_000_000)
        var asked = 0
        var p = "%a_b", t = text
        let result = p.withUTF8 { pb in
            t.withUTF8 { tb in PatternMatch(pb, kind: .like).matches(tb, stop: { asked += 1; return asked == 3 }) }
        }
        XCTAssertNil(result)
        XCTAssertEqual(asked, 3)
    }
}
