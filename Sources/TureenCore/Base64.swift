/// Standard base64 (RFC 4648, with padding): how basic credentials travel,
/// and how an encrypted record carries its bytes in JSON.
public enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let pad = UInt8(ascii: "=")

    /// Each byte's value in the alphabet, 0xFF for a byte outside it.
    private static let values: [UInt8] = {
        var v = [UInt8](repeating: 0xFF, count: 256)
        for (i, c) in alphabet.enumerated() { v[Int(c)] = UInt8(i) }
        return v
    }()

    public static func encode(_ data: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((data.count + 2) / 3 * 4)
        var i = 0
        while i < data.count {
            let n = min(3, data.count - i)
            let b0 = UInt32(data[i]), b1 = n > 1 ? UInt32(data[i + 1]) : 0, b2 = n > 2 ? UInt32(data[i + 2]) : 0
            let v = b0 << 16 | b1 << 8 | b2
            out.append(alphabet[Int(v >> 18 & 63)])
            out.append(alphabet[Int(v >> 12 & 63)])
            out.append(n > 1 ? alphabet[Int(v >> 6 & 63)] : pad)
            out.append(n > 2 ? alphabet[Int(v & 63)] : pad)
            i += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes of canonical base64 text, or nil for anything else: a
    /// length not a multiple of four, a byte outside the alphabet, padding
    /// anywhere but at the end, or bits set after the last byte. Text that
    /// is refused cannot decode to the same bytes as the text that encode
    /// wrote, so a changed character is always a change.
    public static func decode(_ text: String) -> [UInt8]? {
        var text = text
        return text.withUTF8 { decode(bytes: $0) }
    }

    public static func decode(bytes text: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        guard text.count % 4 == 0 else { return nil }
        guard text.count > 0 else { return [] }
        let last = text.count - 4
        let padding = text[last + 3] == pad ? (text[last + 2] == pad ? 2 : 1) : 0
        let size = text.count / 4 * 3 - padding
        // An encrypted record's ciphertext is decoded here on every sync
        // down: the whole quads go through one table, their validity
        // checked once at the end (a value outside the alphabet is 0xFF,
        // the only one with its top bits set).
        return values.withUnsafeBufferPointer { table -> [UInt8]? in
            var invalid: UInt8 = 0
            let out = [UInt8](unsafeUninitializedCapacity: size) { out, written in
                var i = 0, o = 0
                while i < last {
                    let a = table[Int(text[i])], b = table[Int(text[i + 1])], c = table[Int(text[i + 2])], d = table[Int(text[i + 3])]
                    invalid |= a | b | c | d
                    let v = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                    out[o] = UInt8(truncatingIfNeeded: v >> 16)
                    out[o + 1] = UInt8(truncatingIfNeeded: v >> 8)
                    out[o + 2] = UInt8(truncatingIfNeeded: v)
                    i += 4
                    o += 3
                }
                var v: UInt32 = 0
                for j in 0..<4 {
                    v <<= 6
                    if j >= 4 - padding { continue }
                    let c = table[Int(text[last + j])]
                    invalid |= c
                    v |= UInt32(c & 0x3F)
                }
                out[o] = UInt8(truncatingIfNeeded: v >> 16)
                if padding < 2 { out[o + 1] = UInt8(truncatingIfNeeded: v >> 8) }
                if padding < 1 { out[o + 2] = UInt8(truncatingIfNeeded: v) }
                // The bits below the last whole byte must be zero.
                if padding == 2 && v & 0xFFFF != 0 { invalid = 0xFF }
                if padding == 1 && v & 0xFF != 0 { invalid = 0xFF }
                written = size
            }
            return invalid & 0xC0 == 0 ? out : nil
        }
    }
}
