import Glibc

/// Checks an entry without building it. Upsert stores an entry's text as
/// given when re-serialising would change nothing, and then needs no tree:
/// only its index values, which `JSONScanner` reads from the text. Building
/// the tree (a String per member, an array per object) was most of upsert's
/// own time in perf.
///
/// The skim is never more lenient than the parser: it answers true only for
/// text `value(depth:)` accepts. It may answer false for text the parser
/// accepts (an escaped member name, an exponent, deep nesting): the caller
/// then parses that entry in full, which also gives the parser's error for
/// text that is wrong.
extension JSONParser {
    /// Nesting the skim takes on; deeper entries are parsed in full.
    static let skimDepth = 64

    /// With `pos` on a value: true, with `pos` after it, when the value is a
    /// non-empty object the parser accepts, no object in it repeats a member
    /// name or spells one with an escape, nothing in it needs rewriting (see
    /// `Element.needsRewriting`), and none of its own member names is in
    /// `reserved`. `names` is scratch space, left as it was found. `noted`:
    /// where the value of its own member named `note` starts, if it has one.
    mutating func skimPlainObject(reserved: [[UInt8]], note: [UInt8]?, noted: inout Int?, names: inout [Range<Int>]) -> Bool {
        guard peek() == UInt8(ascii: "{") else { return false }
        return skimObject(depth: 1, reserved: reserved, note: note, noted: &noted, names: &names)
    }

    /// Whether `bytes` hold exactly one JSON value the parser accepts,
    /// found by a skim, or by the parser where the skim cannot say.
    package static func isOneValue(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var p = JSONParser(bytes)
        var names: [Range<Int>] = []
        p.skipSpace()
        if p.skimValue(depth: 1, names: &names) {
            p.skipSpace()
            if p.pos == p.end { return true }
        }
        return (try? parse(bytes: bytes)) != nil
    }

    private mutating func skimValue(depth: Int, names: inout [Range<Int>]) -> Bool {
        guard depth <= JSONParser.skimDepth, let c = peek() else { return false }
        switch c {
        case UInt8(ascii: "{"):
            var unused: Int?
            return skimObject(depth: depth + 1, reserved: [], note: nil, noted: &unused, names: &names)
        case UInt8(ascii: "["): return skimArray(depth: depth + 1, names: &names)
        case UInt8(ascii: "\""): return skimString()
        case UInt8(ascii: "t"): return (try? literal("true")) != nil
        case UInt8(ascii: "f"): return (try? literal("false")) != nil
        case UInt8(ascii: "n"): return (try? literal("null")) != nil
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return skimNumber()
        default: return false
        }
    }

    private mutating func skimObject(depth: Int, reserved: [[UInt8]], note: [UInt8]?, noted: inout Int?,
                                     names: inout [Range<Int>]) -> Bool {
        let first = names.count
        defer { names.removeSubrange(first...) }
        pos += 1
        skipSpace()
        if peek() == UInt8(ascii: "}") {
            pos += 1
            return depth > 1  // an empty entry is stored re-serialised
        }
        while true {
            skipSpace()
            guard let name = skimName() else { return false }
            let bytes = UnsafeRawPointer(base! + name.lowerBound)
            // Past a few names, repeats are found once the object ends.
            if names.count - first < JSONObject.scannedMembers {
                for other in names[first...] where other.count == name.count {
                    if memcmp(bytes, base! + other.lowerBound, name.count) == 0 { return false }
                }
            }
            for r in reserved where r.count == name.count {
                if r.withUnsafeBytes({ memcmp(bytes, $0.baseAddress!, name.count) }) == 0 { return false }
            }
            names.append(name)
            skipSpace()
            guard peek() == UInt8(ascii: ":") else { return false }
            pos += 1
            skipSpace()
            if let n = note, n.count == name.count, n.withUnsafeBytes({ memcmp(bytes, $0.baseAddress!, name.count) }) == 0 {
                noted = pos
            }
            guard skimValue(depth: depth, names: &names), let closed = skimSeparator(closer: UInt8(ascii: "}")) else { return false }
            if closed { return names.count - first <= JSONObject.scannedMembers || !repeats(names[first...]) }
        }
    }

    /// Whether a name occurs twice among `names`: sorted, so that a large
    /// object costs n log n comparisons, not a scan per name.
    private func repeats(_ names: ArraySlice<Range<Int>>) -> Bool {
        func compare(_ a: Range<Int>, _ b: Range<Int>) -> Int32 {
            if a.count != b.count { return a.count < b.count ? -1 : 1 }
            return memcmp(base! + a.lowerBound, base! + b.lowerBound, a.count)
        }
        let sorted = names.sorted { compare($0, $1) < 0 }
        return zip(sorted, sorted.dropFirst()).contains { compare($0, $1) == 0 }
    }

    private mutating func skimArray(depth: Int, names: inout [Range<Int>]) -> Bool {
        pos += 1
        skipSpace()
        if peek() == UInt8(ascii: "]") {
            pos += 1
            return true
        }
        while true {
            skipSpace()
            guard skimValue(depth: depth, names: &names), let closed = skimSeparator(closer: UInt8(ascii: "]")) else { return false }
            if closed { return true }
        }
    }

    /// After a container's item: true past `closer`, false past a comma,
    /// nil for anything else.
    @inline(__always)
    private mutating func skimSeparator(closer: UInt8) -> Bool? {
        skipSpace()
        guard let c = peek() else { return nil }
        pos += 1
        if c == closer { return true }
        return c == UInt8(ascii: ",") ? false : nil
    }

    /// A member name without escapes: the range of its bytes between the
    /// quotes, checked as UTF-8; nil for anything else.
    private mutating func skimName() -> Range<Int>? {
        guard peek() == UInt8(ascii: "\"") else { return nil }
        let start = pos + 1
        var i = start
        var high: UInt8 = 0
        while i < end {
            let c = base![i]
            if c == UInt8(ascii: "\"") {
                let range = start..<i
                if high & 0x80 != 0 && !UTF8Validation.isValid(UnsafeBufferPointer(start: base! + start, count: range.count)) {
                    return nil
                }
                pos = i + 1
                return range
            }
            if c == UInt8(ascii: "\\") || c < 0x20 { return nil }
            high |= c
            i += 1
        }
        return nil
    }

    /// Skips a string the parser accepts, without making it. One with an
    /// escape is handed to the parser itself, whose rules for escapes and
    /// surrogates are the ones that count.
    private mutating func skimString() -> Bool {
        let quote = pos
        pos += 1
        let start = pos
        let high = skipPlainBytes()
        guard pos < end else { return false }
        switch base![pos] {
        case UInt8(ascii: "\""):
            let text = UnsafeBufferPointer(start: base! + start, count: pos - start)
            pos += 1
            return high & 0x8080_8080_8080_8080 == 0 || UTF8Validation.isValid(text)
        case UInt8(ascii: "\\"):
            pos = quote
            let was = respelled
            respelled = false
            defer { respelled = was }
            return (try? string()) != nil && !respelled
        default:
            return false  // a control character
        }
    }

    /// Skips a number in RFC 8259's grammar. One with an exponent, or long
    /// enough to be out of a Double's range, goes to the parser, which
    /// refuses what does not convert to a finite number.
    private mutating func skimNumber() -> Bool {
        let start = pos
        func digits() -> Bool {
            guard let c = peek(), c >= 0x30, c <= 0x39 else { return false }
            while let c = peek(), c >= 0x30, c <= 0x39 { pos += 1 }
            return true
        }
        if peek() == UInt8(ascii: "-") { pos += 1 }
        if peek() == UInt8(ascii: "0") {
            pos += 1
        } else if !digits() {
            return false
        }
        let integer = peek() != UInt8(ascii: ".")
        if !integer {
            pos += 1
            guard digits() else { return false }
        }
        if let e = peek(), e == UInt8(ascii: "e") || e == UInt8(ascii: "E") || pos - start > 300 {
            pos = start
            return (try? number()) != nil
        }
        if integer && pos - start > 18 {
            // One that may not fit 64 bits is kept only if it does.
            pos = start
            if case .int? = try? number() { return true }
            return false
        }
        return true
    }
}
