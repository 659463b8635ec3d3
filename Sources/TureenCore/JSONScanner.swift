import Glibc

/// Finds the values at a dotted path in JSON text without building the
/// document: members on the way are skipped byte by byte, and only the values
/// found are parsed. Used wherever a path is read from stored entries (alter
/// and reindex by `project`, SQL over non-indexed paths by `nested`), where a
/// full parse per row would dominate the cost.
public enum JSONScanner {
    /// Same result as `JSONPath.project` on the parsed text.
    public static func project(_ bytes: UnsafeBufferPointer<UInt8>, _ segments: [[UInt8]]) throws -> (values: [JSON], crossedArray: Bool) {
        var p = JSONParser(bytes)
        var out: [JSON] = []
        var crossed = false
        p.skipSpace()
        try walk(&p, segments[...], &out, &crossed)
        return (out, crossed)
    }

    /// `project` of several paths at once, with the same results: an
    /// object's members are walked once for all of them, where `project`
    /// walks them again for each path (an upsert reads every index's path
    /// from each entry's text).
    public static func project(_ bytes: UnsafeBufferPointer<UInt8>, paths: [[[UInt8]]]) throws -> [Projected] {
        var p = JSONParser(bytes)
        p.skipSpace()
        guard p.peek() == UInt8(ascii: "{"), !paths.contains(where: { $0.isEmpty }) else {
            return try paths.map { let (v, c) = try project(bytes, $0); return Projected(values: v, crossedArray: c) }
        }
        var results = [Projected](repeating: Projected(), count: paths.count)
        var found = [Bool](repeating: false, count: paths.count)
        var pending = paths.count
        p.pos += 1
        while pending > 0 {
            p.skipSpace()
            guard p.peek() == UInt8(ascii: "\"") else { break }  // "}" or malformed: the rest lead nowhere
            let name = try memberName(&p)
            p.skipSpace()
            guard p.peek() == UInt8(ascii: ":") else { throw p.error("expected ':'") }
            p.pos += 1
            p.skipSpace()
            // The first member of a name counts, as in `seekMember`.
            for i in paths.indices where !found[i] && name.equals(paths[i][0]) {
                found[i] = true
                pending -= 1
                var at = p
                var crossed = false
                try walk(&at, paths[i].dropFirst(), &results[i].values, &crossed)
                results[i].crossedArray = crossed
            }
            try skipValue(&p)
            p.skipSpace()
            guard p.peek() == UInt8(ascii: ",") else { break }
            p.pos += 1
        }
        return results
    }

    /// What one path yields in `project(_:paths:)`: a struct, as an array
    /// of tuples had its type looked up at run time on every call.
    public struct Projected {
        public var values: [JSON] = []
        public var crossedArray = false
    }

    /// A member name as `seekMember` and `project(_:paths:)` read it.
    private enum MemberName {
        /// In the text itself (no escapes): valid while the text is.
        case inPlace(UnsafeBufferPointer<UInt8>)
        case decoded([UInt8])

        func equals(_ segment: [UInt8]) -> Bool {
            switch self {
            case .inPlace(let b):
                // memcmp: the generic comparison cost some thirty
                // instructions per member and path, on every upserted entry.
                guard segment.count == b.count else { return false }
                guard let at = b.baseAddress, !b.isEmpty else { return true }
                return segment.withUnsafeBufferPointer { memcmp($0.baseAddress!, at, b.count) == 0 }
            case .decoded(let d): return segment == d
            }
        }
    }

    /// The member name at `p`, consumed. Names with escapes are decoded;
    /// plain ones are compared in place.
    private static func memberName(_ p: inout JSONParser) throws -> MemberName {
        let start = p.pos + 1
        var i = start
        while i < p.end {
            let c = p.base![i]
            if c == UInt8(ascii: "\\") { return .decoded(Array(try p.string().utf8)) }
            if c == UInt8(ascii: "\"") {
                p.pos = i + 1
                return .inPlace(UnsafeBufferPointer(start: p.base! + start, count: i - start))
            }
            i += 1
        }
        throw p.error("unterminated string")
    }

    /// SmartStore's projection of a path, for results (selectPaths, Smart
    /// SQL): an array met before the path's end gives the array of what each
    /// element yields, skipping elements that yield nothing, so the document's
    /// nesting stays ({"d":[{"e":[1,2]},{"e":[3]}]} at "d.e" is [[1,2],[3]]);
    /// the value at the end comes back whole. nil when the path leads nowhere
    /// (an array that yields nothing leads nowhere); .null for a JSON null.
    /// Index values flatten instead (`project`), which this must not change.
    public static func nested(_ bytes: UnsafeBufferPointer<UInt8>, _ segments: [[UInt8]]) throws -> JSON? {
        var p = JSONParser(bytes)
        p.skipSpace()
        return try nestedWalk(&p, segments[...])
    }

    private static func nestedWalk(_ p: inout JSONParser, _ rest: ArraySlice<[UInt8]>) throws -> JSON? {
        guard let head = rest.first else { return try p.value(depth: 1) }
        switch p.peek() {
        case UInt8(ascii: "{"):
            guard try seekMember(&p, head) else { return nil }
            return try nestedWalk(&p, rest.dropFirst())
        case UInt8(ascii: "["):
            var found: [JSON] = []
            try forEachElement(&p) { p in
                if let v = try nestedWalk(&p, rest) { found.append(v) }
            }
            return found.isEmpty ? nil : .array(found)
        default:
            return nil
        }
    }

    private static func walk(_ p: inout JSONParser, _ rest: ArraySlice<[UInt8]>, _ out: inout [JSON], _ crossed: inout Bool) throws {
        guard let head = rest.first else { return JSONPath.collect(try p.value(depth: 1), &out, &crossed) }
        switch p.peek() {
        case UInt8(ascii: "{"):
            if try seekMember(&p, head) { try walk(&p, rest.dropFirst(), &out, &crossed) }
        case UInt8(ascii: "["):
            crossed = true
            try forEachElement(&p) { p in try walk(&p, rest, &out, &crossed) }
        default:
            return
        }
    }

    /// With `p` on an object's "{": moves to the value of member `name` and
    /// returns true, or returns false when the object has no such member.
    private static func seekMember(_ p: inout JSONParser, _ name: [UInt8]) throws -> Bool {
        p.pos += 1
        while true {
            p.skipSpace()
            guard p.peek() == UInt8(ascii: "\"") else { return false }  // "}" or malformed: not found
            let matches = try memberName(&p).equals(name)
            p.skipSpace()
            guard p.peek() == UInt8(ascii: ":") else { throw p.error("expected ':'") }
            p.pos += 1
            p.skipSpace()
            // the first match, like the parser's last-wins only for unique
            // names, which stored JSON has
            if matches { return true }
            try skipValue(&p)
            p.skipSpace()
            guard p.peek() == UInt8(ascii: ",") else { return false }
            p.pos += 1
        }
    }

    /// With `p` on an array's "[": calls `body` with `p` on each element.
    private static func forEachElement(_ p: inout JSONParser, _ body: (inout JSONParser) throws -> Void) throws {
        p.pos += 1
        p.skipSpace()
        if p.peek() == UInt8(ascii: "]") { return }
        while true {
            p.skipSpace()
            // The body may stop anywhere inside the element: start again from
            // the element and skip it whole.
            let start = p.pos
            try body(&p)
            p.pos = start
            try skipValue(&p)
            p.skipSpace()
            guard p.peek() == UInt8(ascii: ",") else { return }
            p.pos += 1
        }
    }

    /// Skips one value, tracking strings so brackets inside them are ignored.
    static func skipValue(_ p: inout JSONParser) throws {
        var depth = 0
        repeat {
            guard p.pos < p.end else { throw p.error("unexpected end of input") }
            let c = p.base![p.pos]
            switch c {
            case UInt8(ascii: "\""):
                p.pos += 1
                // Long strings are skipped sixteen bytes a step: a text
                // without the member sought (an entry's record id the change
                // feed reads, a path SQL asks for) is skipped whole, and byte
                // by byte that cost a microsecond per 1 KB entry.
                while true {
                    _ = p.skipPlainBytes()
                    guard p.pos < p.end, p.base![p.pos] != UInt8(ascii: "\"") else { break }
                    p.pos += p.base![p.pos] == UInt8(ascii: "\\") ? 2 : 1
                }
                p.pos += 1
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
                p.pos += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                // A closer where a value should start would end the value
                // outside it: the caller's loop would walk on past its own
                // array, and each array met there would do the same, taking
                // time exponential in the brackets (found by the json fuzz
                // target). Malformed text is an error here.
                guard depth > 0 else { throw p.error("expected a value") }
                depth -= 1
                p.pos += 1
            default:
                if depth == 0 && (c == UInt8(ascii: ",") || c == UInt8(ascii: ":")) { throw p.error("expected a value") }
                p.pos += 1
                // a scalar at depth 0 ends at a delimiter
                if depth == 0 {
                    while p.pos < p.end {
                        let d = p.base![p.pos]
                        if d == UInt8(ascii: ",") || d == UInt8(ascii: "}") || d == UInt8(ascii: "]") || d == 0x20 || d == 0x0A || d == 0x0D || d == 0x09 { break }
                        p.pos += 1
                    }
                }
            }
        } while depth > 0
    }
}
