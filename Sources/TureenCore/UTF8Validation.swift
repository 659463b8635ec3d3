/// Strict UTF-8 (RFC 3629), checked by hand. The standard library's
/// `String(validating:as:)` would do, but it is generic and reaches this
/// library unspecialised on Linux: it looked up type metadata for every
/// string the JSON parser made, a fifth of upsert's own time under perf.
enum UTF8Validation {
    /// The bytes as a String, or nil when they are not valid UTF-8.
    static func string(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        // Valid input decodes unchanged: the repairs of `decoding` never happen.
        isValid(bytes) ? String(decoding: bytes, as: UTF8.self) : nil
    }

    /// Rejects what RFC 3629 rejects: stray continuation bytes, overlong
    /// forms, surrogates (U+D800–DFFF), code points past U+10FFFF and
    /// sequences cut short.
    static func isValid(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let p = bytes.baseAddress else { return true }
        let n = bytes.count
        var i = 0
        while i < n {
            // Runs of ASCII, the usual case, eight bytes at a time.
            while n - i >= 8 && UnsafeRawPointer(p + i).loadUnaligned(as: UInt64.self) & 0x8080_8080_8080_8080 == 0 {
                i += 8
            }
            guard i < n else { return true }
            let lead = p[i]
            if lead < 0x80 {
                i += 1
                continue
            }
            // The second byte's range depends on the lead; the rest are 80–BF.
            var low: UInt8 = 0x80
            var high: UInt8 = 0xBF
            let trailing: Int
            switch lead {
            case 0xC2...0xDF: trailing = 1
            case 0xE0: trailing = 2; low = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: trailing = 2
            case 0xED: trailing = 2; high = 0x9F
            case 0xF0: trailing = 3; low = 0x90
            case 0xF1...0xF3: trailing = 3
            case 0xF4: trailing = 3; high = 0x8F
            default: return false
            }
            guard n - i > trailing else { return false }
            let second = p[i + 1]
            guard second >= low && second <= high else { return false }
            var k = 2
            while k <= trailing {
                guard p[i + k] & 0xC0 == 0x80 else { return false }
                k += 1
            }
            i += trailing + 1
        }
        return true
    }
}
