import CJSONScan

/// A strict RFC 8259 parser over UTF-8 bytes. It rejects trailing garbage,
/// invalid UTF-8, lone surrogates and nesting deeper than `maxDepth`, and says
/// at which byte offset it stopped, so a host sees why its input was refused.
public struct JSONParser {
    public static let maxDepth = 512

    public static func parse(_ text: String) throws -> JSON {
        var text = text
        return try text.withUTF8 { try parse(bytes: $0) }
    }

    public static func parse(bytes: UnsafeBufferPointer<UInt8>) throws -> JSON {
        try whole(bytes) { try $0.value(depth: 0) }
    }

    /// What `body` reads from `bytes`, which must hold that and nothing
    /// else but space around it.
    @inline(__always)
    private static func whole<T>(_ bytes: UnsafeBufferPointer<UInt8>, _ body: (inout JSONParser) throws -> T) throws -> T {
        var p = JSONParser(bytes)
        p.skipSpace()
        let read = try body(&p)
        p.skipSpace()
        if p.pos != p.end { throw p.error("unexpected text after the JSON value") }
        return read
    }

    /// `parse(bytes:)`, also saying where in `bytes` each element of the
    /// array at `path` lies (member names from the top; none: the value
    /// itself), with whether its text may be stored as it is (see
    /// `Element`): nil when the value there is not an array. A name
    /// repeated on the way counts as the tree has it, by its last member.
    /// For a page of records whose text may be kept as it came.
    public static func parse(bytes: UnsafeBufferPointer<UInt8>, elementsAt path: [String]) throws -> (JSON, [Element]?) {
        var elements: [Element]?
        let v = try whole(bytes) { p in try p.value(depth: 0, elementsAt: path[...], &elements) }
        return (v, elements)
    }

    private mutating func value(depth: Int, elementsAt path: ArraySlice<String>, _ elements: inout [Element]?) throws -> JSON {
        guard let name = path.first else {
            guard peek() == UInt8(ascii: "[") else { return try value(depth: depth) }
            var found: [Element] = []
            let v = try array(depth: depth + 1) { p in
                let start = p.pos, before = (p.duplicates, p.respelled)
                (p.duplicates, p.respelled) = (false, false)
                let item = try p.value(depth: depth + 1)
                found.append(p.element(from: start))
                (p.duplicates, p.respelled) = (p.duplicates || before.0, p.respelled || before.1)
                return item
            }
            elements = found
            return v
        }
        guard peek() == UInt8(ascii: "{") else { return try value(depth: depth) }
        return try object(depth: depth + 1) { p, key in
            guard key.hasSameBytes(as: name) else { return try p.value(depth: depth + 1) }
            elements = nil
            return try p.value(depth: depth + 1, elementsAt: path.dropFirst(), &elements)
        }
    }

    /// Parses `text`, one JSON value, and when it is an object hands each
    /// member's name (as UTF-8, valid, escapes decoded) and value to `body`
    /// in order, without building the object: a repeated name comes once per
    /// occurrence. Returns false, having called nothing, when the value is
    /// not an object. For a caller that takes a few known members: the
    /// object's tree was a third of a short query's parse, and a String per
    /// name most of what was left of the names.
    public static func parseMembers(_ text: String, _ body: (UnsafeBufferPointer<UInt8>, JSON) throws -> Void) throws -> Bool {
        var text = text
        return try text.withUTF8 { bytes in
            try whole(bytes) { p in
                guard p.peek() == UInt8(ascii: "{") else {
                    _ = try p.value(depth: 0)
                    return false
                }
                try p.members(depth: 1, name: { try $0.memberName() }, value: { p, _ in try p.value(depth: 1) }) { name, v in
                    switch name {
                    case .plain(let b): try body(b, v)
                    case .decoded(var s): try s.withUTF8 { try body($0, v) }
                    }
                }
                return true
            }
        }
    }

    /// Parses a top-level object, or an array one element at a time, so a
    /// large batch is never held as one tree. Returns whether it was an array.
    @discardableResult
    public static func parseEach(bytes: UnsafeBufferPointer<UInt8>, _ body: (Int, JSON) throws -> Void) throws -> Bool {
        try parseEach(bytes: bytes) { i, v, _ in try body(i, v) }
    }

    /// A parsed top-level value or array element, with the text it came from
    /// and whether an object in it repeated a member name.
    public struct Element {
        public let text: UnsafeBufferPointer<UInt8>
        public let hadDuplicateNames: Bool
        /// The text says something its tree does not, or says it in a way
        /// the store's readers of stored text would miss: an object repeats
        /// a name (the tree keeps the last); a string spells a printable
        /// ASCII character with a \u escape (blob references are found in
        /// stored text by their bytes, so "sha256\u002d..." would let blob
        /// collection take a blob an entry still names); or an integer is
        /// beyond 64 bits (the tree, the indexes and sync up hold it
        /// rounded). Such text is stored written out from the tree.
        public let needsRewriting: Bool

        public init(text: UnsafeBufferPointer<UInt8>, hadDuplicateNames: Bool, needsRewriting: Bool) {
            self.text = text
            self.hadDuplicateNames = hadDuplicateNames
            self.needsRewriting = needsRewriting
        }
    }

    @discardableResult
    public static func parseEach(bytes: UnsafeBufferPointer<UInt8>, _ body: (Int, JSON, Element) throws -> Void) throws -> Bool {
        try parseEach(bytes: bytes, skimmingObjectsWithout: nil) { i, item in
            guard case .parsed(let v, let element) = item else { return }  // nothing is skimmed
            try body(i, v, element)
        }
    }

    /// A top-level value or array element: parsed, or only checked and left
    /// as its text (see `skimPlainObject`), with where in it the value of
    /// its member named as `parseEach` was told to note starts, if it has
    /// that member.
    public enum Item {
        case parsed(JSON, Element)
        case plain(UnsafeBufferPointer<UInt8>, noted: Int?)
    }

    /// As `parseEach`, but an element that is a plain object (non-empty, no
    /// repeated or escaped member names, none of `reserved` among its own)
    /// is only checked, not built, and handed over as its text, and where
    /// its member named `note` is. With `reserved` nil every element is
    /// parsed.
    @discardableResult
    public static func parseEach(bytes: UnsafeBufferPointer<UInt8>, skimmingObjectsWithout reserved: [[UInt8]]?, noting note: [UInt8]? = nil,
                                 _ body: (Int, Item) throws -> Void) throws -> Bool {
        var p = JSONParser(bytes)
        var names: [Range<Int>] = []
        func next(depth: Int) throws -> Item {
            let start = p.pos
            if let reserved = reserved {
                var probe = p
                var noted: Int?
                if probe.skimPlainObject(reserved: reserved, note: note, noted: &noted, names: &names) {
                    p.pos = probe.pos
                    return .plain(UnsafeBufferPointer(start: p.base! + start, count: p.pos - start), noted: noted.map { $0 - start })
                }
            }
            (p.duplicates, p.respelled) = (false, false)
            let v = try p.value(depth: depth)
            return .parsed(v, p.element(from: start))
        }
        p.skipSpace()
        guard p.peek() == UInt8(ascii: "[") else {
            let item = try next(depth: 0)
            p.skipSpace()
            if p.pos != p.end { throw p.error("unexpected text after the JSON value") }
            try body(0, item)
            return false
        }
        p.pos += 1
        p.skipSpace()
        var i = 0
        if p.peek() == UInt8(ascii: "]") {
            p.pos += 1
        } else {
            while true {
                p.skipSpace()
                try body(i, try next(depth: 1))
                i += 1
                p.skipSpace()
                guard let c = p.peek() else { throw p.error("unterminated array") }
                p.pos += 1
                if c == UInt8(ascii: "]") { break }
                if c != UInt8(ascii: ",") { p.pos -= 1; throw p.error("expected ',' or ']'") }
            }
        }
        p.skipSpace()
        if p.pos != p.end { throw p.error("unexpected text after the JSON value") }
        return true
    }

    let base: UnsafePointer<UInt8>?
    package var pos = 0
    let end: Int
    /// Set when an object repeated a member name (the last one wins).
    var duplicates = false
    /// Set when a string spelled a printable ASCII character with a \u
    /// escape, or an integer did not fit 64 bits (see
    /// `Element.needsRewriting`).
    var respelled = false

    func element(from start: Int) -> Element {
        Element(text: UnsafeBufferPointer(start: base! + start, count: pos - start), hadDuplicateNames: duplicates,
                needsRewriting: duplicates || respelled)
    }

    package init(_ b: UnsafeBufferPointer<UInt8>) {
        base = b.baseAddress
        end = b.count
    }

    func error(_ what: String) -> TureenError {
        .invalid("malformed JSON at byte \(pos): \(what)")
    }

    @inline(__always) func peek() -> UInt8? {
        pos < end ? base![pos] : nil
    }

    package mutating func skipSpace() {
        while pos < end {
            let c = base![pos]
            if c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 { pos += 1 } else { break }
        }
    }

    package mutating func value(depth: Int) throws -> JSON {
        guard let c = peek() else { throw error("unexpected end of input") }
        switch c {
        case UInt8(ascii: "{"): return try object(depth: depth + 1)
        case UInt8(ascii: "["): return try array(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw error("unexpected character '\(Unicode.Scalar(c))'")
        }
    }

    mutating func literal(_ word: StaticString) throws {
        let n = word.utf8CodeUnitCount
        guard end - pos >= n else { throw error("unexpected end of input") }
        for i in 0..<n where base![pos + i] != word.utf8Start[i] {
            throw error("invalid literal")
        }
        pos += n
    }

    private mutating func object(depth: Int) throws -> JSON {
        try object(depth: depth) { p, _ in try p.value(depth: depth) }
    }

    /// `object(depth:)` with each member's value read by `valueOf`, which
    /// is given the member's name.
    @inline(__always)
    private mutating func object(depth: Int, valueOf: (inout JSONParser, String) throws -> JSON) throws -> JSON {
        var obj = JSONObject()
        // Names are looked up by a scan while the object is small, then in a
        // dictionary (see JSONObject.scannedMembers).
        var index: [ExactString: Int]?
        var repeated = false
        try members(depth: depth, name: { try $0.string() }, value: valueOf) { key, v in
            if index == nil && obj.count >= JSONObject.scannedMembers { index = obj.nameIndex() }
            let existing: Int?
            if let index { existing = index[ExactString(key)] } else { existing = obj.members.firstIndex { $0.key.hasSameBytes(as: key) } }
            // A duplicate name keeps the last value, as most parsers do.
            if let at = existing {
                obj.replaceValue(at: at, with: v)
                repeated = true
            } else {
                index?[ExactString(key)] = obj.count
                obj.appendUnchecked(key, v)
            }
        }
        if repeated { duplicates = true }
        return .object(obj)
    }

    /// With `pos` on "{": hands each member's name, as `name` reads it, and
    /// value, as `value` reads it given the name, to `body`, in order, and
    /// leaves `pos` after the "}".
    @inline(__always)
    private mutating func members<Name>(depth: Int, name: (inout JSONParser) throws -> Name,
                                        value: (inout JSONParser, Name) throws -> JSON,
                                        _ body: (Name, JSON) throws -> Void) throws {
        if depth > JSONParser.maxDepth { throw error("nesting deeper than \(JSONParser.maxDepth)") }
        pos += 1
        skipSpace()
        if peek() == UInt8(ascii: "}") { pos += 1; return }
        while true {
            skipSpace()
            guard peek() == UInt8(ascii: "\"") else { throw error("expected a member name") }
            let key = try name(&self)
            skipSpace()
            guard peek() == UInt8(ascii: ":") else { throw error("expected ':'") }
            pos += 1
            skipSpace()
            try body(key, try value(&self, key))
            skipSpace()
            guard let c = peek() else { throw error("unterminated object") }
            pos += 1
            if c == UInt8(ascii: "}") { return }
            if c != UInt8(ascii: ",") { pos -= 1; throw error("expected ',' or '}'") }
        }
    }

    private mutating func array(depth: Int) throws -> JSON {
        try array(depth: depth) { p in try p.value(depth: depth) }
    }

    /// `array(depth:)` with each element read by `item`.
    @inline(__always)
    private mutating func array(depth: Int, item: (inout JSONParser) throws -> JSON) throws -> JSON {
        if depth > JSONParser.maxDepth { throw error("nesting deeper than \(JSONParser.maxDepth)") }
        pos += 1
        var items: [JSON] = []
        skipSpace()
        if peek() == UInt8(ascii: "]") { pos += 1; return .array(items) }
        while true {
            skipSpace()
            items.append(try item(&self))
            skipSpace()
            guard let c = peek() else { throw error("unterminated array") }
            pos += 1
            if c == UInt8(ascii: "]") { return .array(items) }
            if c != UInt8(ascii: ",") { pos -= 1; throw error("expected ',' or ']'") }
        }
    }

    mutating func number() throws -> JSON {
        let start = pos
        var isInteger = true
        if peek() == UInt8(ascii: "-") { pos += 1 }
        guard let first = peek(), first >= 0x30, first <= 0x39 else { throw error("invalid number") }
        if first == 0x30 {
            pos += 1
        } else {
            while let c = peek(), c >= 0x30, c <= 0x39 { pos += 1 }
        }
        if peek() == UInt8(ascii: ".") {
            isInteger = false
            pos += 1
            guard let c = peek(), c >= 0x30, c <= 0x39 else { throw error("invalid number") }
            while let c = peek(), c >= 0x30, c <= 0x39 { pos += 1 }
        }
        if let e = peek(), e == UInt8(ascii: "e") || e == UInt8(ascii: "E") {
            isInteger = false
            pos += 1
            if let s = peek(), s == UInt8(ascii: "+") || s == UInt8(ascii: "-") { pos += 1 }
            guard let c = peek(), c >= 0x30, c <= 0x39 else { throw error("invalid number") }
            while let c = peek(), c >= 0x30, c <= 0x39 { pos += 1 }
        }
        let negative = base![start] == UInt8(ascii: "-")
        if isInteger && pos - start - (negative ? 1 : 0) <= 18 {
            // Eighteen digits cannot overflow: the value straight from the
            // bytes, without a String for the text (500 instructions).
            var v: Int64 = 0
            for k in (negative ? start + 1 : start)..<pos { v = v &* 10 &+ Int64(base![k] &- 0x30) }
            return .int(negative ? -v : v)
        }
        if !isInteger, let d = exactDouble(start, pos) { return .double(d) }
        let text = String(decoding: UnsafeBufferPointer(start: base! + start, count: pos - start), as: UTF8.self)
        if isInteger, let i = Int64(text) { return .int(i) }
        guard let d = Double(text), d.isFinite else {
            pos = start
            throw error("number out of range")
        }
        if isInteger { respelled = true }
        return .double(d)
    }

    private mutating func hex4() throws -> UInt32 {
        guard end - pos >= 4 else { throw error("truncated \\u escape") }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let c = base![pos]
            let d: UInt8
            switch c {
            case 0x30...0x39: d = c - 0x30
            case 0x41...0x46: d = c - 0x41 + 10
            case 0x61...0x66: d = c - 0x61 + 10
            default: throw error("invalid \\u escape")
            }
            v = v << 4 | UInt32(d)
            pos += 1
        }
        return v
    }

    /// With `pos` inside a string: moves over the bytes that need no
    /// attention, up to a quote, a backslash, a control character or the
    /// end. Strings are most of an entry's bytes, so this runs in C, sixteen
    /// bytes a step (CJSONScan). Returns a value with a high bit set when
    /// one of the bytes passed was not ASCII.
    mutating func skipPlainBytes() -> UInt64 {
        guard pos < end else { return 0 }
        var high: UInt8 = 0
        pos += cjsonscan_plain(base! + pos, end - pos, &high)
        return UInt64(high)
    }

    /// With `pos` on a string's opening quote: when the string has no
    /// escapes, moves past it and returns its bytes, checked as UTF-8 as a
    /// whole (and not at all when no byte had its high bit set: plain
    /// ASCII). Else returns nil with `pos` on the first byte that needs
    /// attention: a backslash, a control character or the end.
    mutating func plainString() throws -> UnsafeBufferPointer<UInt8>? {
        pos += 1
        let start = pos
        let high = skipPlainBytes()
        guard pos < end && base![pos] == UInt8(ascii: "\"") else { return nil }
        let raw = UnsafeBufferPointer(start: base! + start, count: pos - start)
        if high & 0x8080_8080_8080_8080 != 0 && !UTF8Validation.isValid(raw) {
            pos = start
            throw error("string is not valid UTF-8")
        }
        pos += 1
        return raw
    }

    /// A member name as `parseMembers` reads it: its bytes in the input, or
    /// decoded when it has escapes.
    enum MemberName {
        case plain(UnsafeBufferPointer<UInt8>)
        case decoded(String)
    }

    mutating func memberName() throws -> MemberName {
        let quote = pos
        if let b = try plainString() { return .plain(b) }
        pos = quote
        return .decoded(try string())
    }

    mutating func string() throws -> String {
        let start = pos + 1
        if let raw = try plainString() { return String(decoding: raw, as: UTF8.self) }
        if pos < end && base![pos] < 0x20 { throw error("control character in string") }
        var bytes = [UInt8](UnsafeBufferPointer(start: base! + start, count: pos - start))
        while true {
            guard pos < end else { throw error("unterminated string") }
            let c = base![pos]
            pos += 1
            switch c {
            case UInt8(ascii: "\""):
                guard let s = bytes.withUnsafeBufferPointer({ UTF8Validation.string($0) }) else {
                    throw error("string is not valid UTF-8")
                }
                return s
            case UInt8(ascii: "\\"):
                guard pos < end else { throw error("unterminated string") }
                let e = base![pos]
                pos += 1
                switch e {
                case UInt8(ascii: "\""): bytes.append(0x22)
                case UInt8(ascii: "\\"): bytes.append(0x5C)
                case UInt8(ascii: "/"): bytes.append(0x2F)
                case UInt8(ascii: "b"): bytes.append(0x08)
                case UInt8(ascii: "f"): bytes.append(0x0C)
                case UInt8(ascii: "n"): bytes.append(0x0A)
                case UInt8(ascii: "r"): bytes.append(0x0D)
                case UInt8(ascii: "t"): bytes.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if scalar >= 0x20 && scalar < 0x80 { respelled = true }
                    if scalar >= 0xD800 && scalar < 0xDC00 {
                        guard end - pos >= 2, base![pos] == UInt8(ascii: "\\"), base![pos + 1] == UInt8(ascii: "u") else {
                            throw error("lone surrogate in \\u escape")
                        }
                        pos += 2
                        let low = try hex4()
                        guard low >= 0xDC00 && low < 0xE000 else { throw error("lone surrogate in \\u escape") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if scalar >= 0xDC00 && scalar < 0xE000 {
                        throw error("lone surrogate in \\u escape")
                    }
                    guard let u = Unicode.Scalar(scalar) else { throw error("invalid \\u escape") }
                    bytes.append(contentsOf: UTF8.encode(u)!)
                default:
                    throw error("invalid escape '\\\(Unicode.Scalar(e))'")
                }
            default:
                if c < 0x20 { throw error("control character in string") }
                bytes.append(c)
            }
        }
    }
}
