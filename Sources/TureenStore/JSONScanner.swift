/// Finds the values at a dotted path in JSON text without building the
/// document: members on the way are skipped byte by byte, and only the values
/// found are parsed. Used wherever a path is read from stored entries (alter,
/// reindex, SQL over non-indexed paths), where a full parse per row would
/// dominate the cost.
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

    private static func walk(_ p: inout JSONParser, _ rest: ArraySlice<[UInt8]>, _ out: inout [JSON], _ crossed: inout Bool) throws {
        guard let head = rest.first else { return JSONPath.collect(try p.value(depth: 1), &out, &crossed) }
        switch p.peek() {
        case UInt8(ascii: "{"):
            p.pos += 1
            while true {
                p.skipSpace()
                guard p.peek() == UInt8(ascii: "\"") else { return }  // "}" or malformed: not found
                let matches = try memberNameEquals(&p, head)
                p.skipSpace()
                guard p.peek() == UInt8(ascii: ":") else { throw p.error("expected ':'") }
                p.pos += 1
                p.skipSpace()
                if matches {
                    try walk(&p, rest.dropFirst(), &out, &crossed)
                    return  // like the parser's last-wins only for unique names, which stored JSON has
                }
                try skipValue(&p)
                p.skipSpace()
                guard p.peek() == UInt8(ascii: ",") else { return }
                p.pos += 1
            }
        case UInt8(ascii: "["):
            crossed = true
            p.pos += 1
            p.skipSpace()
            if p.peek() == UInt8(ascii: "]") { return }
            while true {
                p.skipSpace()
                // The walk may stop anywhere inside the element: start again
                // from the element and skip it whole.
                let start = p.pos
                try walk(&p, rest, &out, &crossed)
                p.pos = start
                try skipValue(&p)
                p.skipSpace()
                guard p.peek() == UInt8(ascii: ",") else { return }
                p.pos += 1
            }
        default:
            return
        }
    }

    /// Compares the member name at `p` with `name`, consuming it. Names with
    /// escapes are decoded first; plain ones are compared in place.
    private static func memberNameEquals(_ p: inout JSONParser, _ name: [UInt8]) throws -> Bool {
        let start = p.pos + 1
        var i = start
        while i < p.end {
            let c = p.base![i]
            if c == UInt8(ascii: "\\") {
                return try p.string().utf8.elementsEqual(name)
            }
            if c == UInt8(ascii: "\"") {
                p.pos = i + 1
                guard i - start == name.count else { return false }
                for k in 0..<name.count where p.base![start + k] != name[k] { return false }
                return true
            }
            i += 1
        }
        throw p.error("unterminated string")
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
                while p.pos < p.end && p.base![p.pos] != UInt8(ascii: "\"") {
                    p.pos += p.base![p.pos] == UInt8(ascii: "\\") ? 2 : 1
                }
                p.pos += 1
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
                p.pos += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                p.pos += 1
            default:
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
