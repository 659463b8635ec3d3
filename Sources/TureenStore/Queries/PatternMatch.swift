import Glibc
import TureenCore

/// SQL's LIKE and GLOB, with SQLite's rules, in time bounded by the pattern's
/// length times the text's.
///
/// SQLite 3.15's own matcher retries every way a wildcard can split the text:
/// `%a%a%a%b` against 800 "a"s took 13 s inside one step of the statement,
/// where neither the progress handler (query_timeout_ms) nor an interrupt can
/// reach it. Here a wildcard only ever resumes from the last `%` (or `*`)
/// seen, which finds the same matches: everything between two wildcards must
/// match one character at a time, so an earlier wildcard never needs a
/// second try once a later one has matched. The loop also asks `stop` now
/// and then, so a long match still ends with its query.
///
/// Rules kept from SQLite's `patternCompare`: text ends at its first NUL;
/// bytes are read as SQLite reads UTF-8 (`sqlite3Utf8Read`); LIKE folds ASCII
/// letters only; an escape before the pattern's end makes the next character
/// literal and an escape at the very end matches nothing; a GLOB set `[...]`
/// takes `^` first to negate, `]` first as a member, `a-z` ranges, and never
/// matches when it is not closed.
struct PatternMatch {
    enum Kind { case like, glob }

    private enum Token {
        case anySequence
        case anyCharacter
        case character(UInt32)
        case set(members: [ClosedRange<UInt32>], negated: Bool)
    }

    // The tokens, flattened for the matching loop: an enum with an array
    // in one case is retained and released at every look, which made a
    // LIKE '%term%' count 13x slower than SQLite's.
    private static let sequence: UInt8 = 0, single: UInt8 = 1, literal: UInt8 = 2, member: UInt8 = 3
    private let kinds: [UInt8]
    private let values: [UInt32]  // literal: the character; member: an index in `sets`
    private let sets: [(members: [ClosedRange<UInt32>], negated: Bool)]
    private let foldsCase: Bool
    /// What it was made from, so a statement that runs the same pattern on
    /// every row compiles it once (`isMade`).
    private let source: (pattern: [UInt8], kind: Kind, escape: UInt32?)
    /// An unclosed set, or an escape with nothing after it: no text matches.
    private let matchesNothing: Bool

    /// Matching steps between two calls of `stop`.
    static let stepsPerCheck = 1 << 16

    init(_ pattern: UnsafeBufferPointer<UInt8>, kind: Kind, escape: UInt32? = nil) {
        let p = PatternMatch.decode(pattern)
        var tokens: [Token] = []
        var nothing = false
        var wildcardRun = false  // only '%' and '_' since the last '%'
        var i = 0
        while i < p.count {
            let c = p[i]
            i += 1
            switch kind {
            case .like:
                // SQLite's order: '%' is a wildcard even when it is also the
                // escape; '_' is not, except in a run of wildcards after a '%'.
                if c == 0x25 {  // %
                    tokens.append(.anySequence)
                    wildcardRun = true
                    continue
                } else if c == 0x5F && wildcardRun {
                    tokens.append(.anyCharacter)
                    continue
                } else if let e = escape, c == e {
                    guard i < p.count else { nothing = true; break }
                    tokens.append(.character(p[i]))
                    i += 1
                } else if c == 0x5F {  // _
                    tokens.append(.anyCharacter)
                } else {
                    tokens.append(.character(c))
                }
            case .glob:
                if c == 0x2A {  // *
                    tokens.append(.anySequence)
                } else if c == 0x3F {  // ?
                    tokens.append(.anyCharacter)
                } else if c == 0x5B {  // [
                    guard let (set, next) = PatternMatch.set(p, from: i) else { nothing = true; break }
                    tokens.append(set)
                    i = next
                } else {
                    tokens.append(.character(c))
                }
            }
            if nothing { break }
            wildcardRun = false
        }
        var kinds: [UInt8] = [], values: [UInt32] = []
        var sets: [(members: [ClosedRange<UInt32>], negated: Bool)] = []
        for t in tokens {
            switch t {
            case .anySequence:
                if kinds.last == PatternMatch.sequence { continue }
                kinds.append(PatternMatch.sequence)
                values.append(0)
            case .anyCharacter:
                kinds.append(PatternMatch.single)
                values.append(0)
            case .character(let c):
                kinds.append(PatternMatch.literal)
                values.append(c)
            case .set(let members, let negated):
                kinds.append(PatternMatch.member)
                values.append(UInt32(sets.count))
                sets.append((members, negated))
            }
        }
        self.kinds = kinds
        self.values = values
        self.sets = sets
        self.foldsCase = kind == .like
        self.source = (Array(pattern), kind, escape)
        self.matchesNothing = nothing
    }

    /// Whether this matcher is the one `init` makes of these arguments.
    func isMade(of pattern: UnsafeBufferPointer<UInt8>, kind: Kind, escape: UInt32?) -> Bool {
        guard source.kind == kind, source.escape == escape, source.pattern.count == pattern.count else { return false }
        return pattern.isEmpty || source.pattern.withUnsafeBytes { memcmp($0.baseAddress!, pattern.baseAddress!, pattern.count) == 0 }
    }

    /// Bytes before the first NUL, where SQLite's matcher stops reading.
    static func length(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        guard let base = bytes.baseAddress, let nul = memchr(base, 0, bytes.count) else { return bytes.count }
        return UnsafeRawPointer(base).distance(to: UnsafeRawPointer(nul))
    }

    /// Whether `text` matches; nil when `stop` said to give up. The text is
    /// read in place, a character at a time: a copy of it as code points
    /// would take four times its size.
    func matches(_ text: UnsafeBufferPointer<UInt8>, stop: () -> Bool) -> Bool? {
        if matchesNothing { return false }
        return kinds.withUnsafeBufferPointer { kinds in
            values.withUnsafeBufferPointer { values in match(text, kinds, values, stop) }
        }
    }

    private func match(_ text: UnsafeBufferPointer<UInt8>, _ kinds: UnsafeBufferPointer<UInt8>,
                       _ values: UnsafeBufferPointer<UInt32>, _ stop: () -> Bool) -> Bool? {
        let end = PatternMatch.length(text)
        let n = kinds.count
        var ti = 0, pi = 0
        var resumeToken = -1, resumeText = 0  // after the last wildcard sequence
        var steps = 0
        while ti < end {
            steps &+= 1
            if steps % PatternMatch.stepsPerCheck == 0 && stop() { return nil }
            if pi < n {
                if kinds[pi] == PatternMatch.sequence {
                    resumeToken = pi + 1
                    resumeText = ti
                    pi += 1
                    ti = skipToCandidate(text, from: ti, end: end, kinds, values, resumeToken)
                    resumeText = ti
                    continue
                }
                let (c, next) = PatternMatch.character(text, at: ti, end: end)
                if accepts(kinds[pi], values[pi], c) {
                    pi += 1
                    ti = next
                    continue
                }
            }
            // A mismatch: the last wildcard takes one more character.
            guard resumeToken >= 0 else { return false }
            resumeText = PatternMatch.character(text, at: resumeText, end: end).next
            resumeText = skipToCandidate(text, from: resumeText, end: end, kinds, values, resumeToken)
            ti = resumeText
            pi = resumeToken
        }
        while pi < n && kinds[pi] == PatternMatch.sequence { pi += 1 }
        return pi == n
    }

    /// Where the text after a wildcard can next match the token `t`: when
    /// that is an ASCII literal, at the next byte equal to it (in either case
    /// for LIKE), as SQLite's matcher looks. An ASCII byte is never inside
    /// another character's bytes, so the search can go byte by byte.
    @inline(__always)
    private func skipToCandidate(_ text: UnsafeBufferPointer<UInt8>, from: Int, end: Int,
                                 _ kinds: UnsafeBufferPointer<UInt8>, _ values: UnsafeBufferPointer<UInt32>, _ t: Int) -> Int {
        guard t < kinds.count, kinds[t] == PatternMatch.literal, values[t] < 0x80 else { return from }
        let c = UInt8(values[t])
        let other = foldsCase ? PatternMatch.otherCase(c) : c
        var i = from
        // Eight bytes at a time while none of them can be either byte (SWAR:
        // a byte equals c when its XOR with c is zero, and subtracting one
        // from a zero byte borrows into its high bit): this search is most
        // of a LIKE's time.
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        let cs = ones &* UInt64(c), others = ones &* UInt64(other)
        let base = UnsafeRawPointer(text.baseAddress!)
        while end - i >= 8 {
            let word = base.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            let x = word ^ cs, y = word ^ others
            if ((x &- ones) & ~x & highs) | ((y &- ones) & ~y & highs) != 0 { break }
            i += 8
        }
        while i < end && text[i] != c && text[i] != other { i += 1 }
        return i
    }

    @inline(__always)
    private func accepts(_ kind: UInt8, _ value: UInt32, _ c: UInt32) -> Bool {
        switch kind {
        case PatternMatch.literal:
            return value == c || (foldsCase && value < 0x80 && c < 0x80 && PatternMatch.lower(value) == PatternMatch.lower(c))
        case PatternMatch.member:
            let set = sets[Int(value)]
            return set.members.contains { $0.contains(c) } != set.negated
        default:
            return true
        }
    }

    private static func otherCase(_ c: UInt8) -> UInt8 {
        switch c {
        case 0x41...0x5A: return c + 0x20
        case 0x61...0x7A: return c - 0x20
        default: return c
        }
    }

    private static func lower(_ c: UInt32) -> UInt32 { c >= 0x41 && c <= 0x5A ? c + 0x20 : c }

    /// A GLOB set whose first member is at `from` (just past the `[`), and
    /// where the pattern goes on after its `]`; nil when it is not closed.
    private static func set(_ p: [UInt32], from: Int) -> (Token, Int)? {
        var i = from
        var negated = false
        var members: [ClosedRange<UInt32>] = []
        if i < p.count && p[i] == 0x5E { negated = true; i += 1 }  // ^
        if i < p.count && p[i] == 0x5D { members.append(0x5D...0x5D); i += 1 }  // ] first is a member
        var prior: UInt32 = 0  // the member a following '-' starts a range from
        while i < p.count && p[i] != 0x5D {
            let c = p[i]
            if c == 0x2D && prior > 0 && i + 1 < p.count && p[i + 1] != 0x5D {  // '-' between two members
                let upper = p[i + 1]
                // The member before the '-' stays one; a reversed range adds nothing.
                if prior <= upper { members.append(prior...upper) }
                prior = 0
                i += 2
            } else {
                members.append(c...c)
                prior = c
                i += 1
            }
        }
        guard i < p.count else { return nil }
        return (.set(members: members, negated: negated), i + 1)
    }

    /// The code point at byte `i` as `sqlite3Utf8Read` reads it, and where
    /// the next begins: a lead byte takes every continuation byte after it,
    /// and overlong forms, surrogates and U+FFFE/FFFF become U+FFFD. A stray
    /// continuation byte stands for itself.
    @inline(__always)
    static func character(_ bytes: UnsafeBufferPointer<UInt8>, at start: Int, end: Int) -> (UInt32, next: Int) {
        let b = bytes[start]
        var i = start + 1
        guard b >= 0xC0 else { return (UInt32(b), i) }
        var c: UInt32 = b < 0xE0 ? UInt32(b - 0xC0) : b < 0xF0 ? UInt32(b - 0xE0) : b < 0xF8 ? UInt32(b - 0xF0)
            : b < 0xFC ? UInt32(b - 0xF8) : b < 0xFE ? UInt32(b - 0xFC) : 0
        while i < end && bytes[i] & 0xC0 == 0x80 {
            c = (c &<< 6) &+ UInt32(bytes[i] & 0x3F)
            i += 1
        }
        if c < 0x80 || c & 0xFFFF_F800 == 0xD800 || c & 0xFFFF_FFFE == 0xFFFE { c = 0xFFFD }
        return (c, i)
    }

    /// Every code point up to the first NUL, for patterns (at most
    /// `maxPatternBytes` of them).
    static func decode(_ bytes: UnsafeBufferPointer<UInt8>) -> [UInt32] {
        let end = length(bytes)
        var out: [UInt32] = []
        var i = 0
        while i < end {
            let (c, next) = character(bytes, at: i, end: end)
            out.append(c)
            i = next
        }
        return out
    }
}
